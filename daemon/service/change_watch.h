// The daemon as the regression watcher (issue 49 item 4): after each of its runs (configured or
// of a matrix plan), the change points that run brought to the history of its group (the data
// directory's runs of the same label, workload and load generator command: repeats of one
// configuration), each as pgwaitprof_change_point{group, metric} = the step and a warning in the
// log. Alertmanager does the notifying (deploy/prometheus/rules.yml: PgwaitprofChangePoint).
#pragma once

#include <filesystem>
#include <functional>

#include "exporters/prometheus/prometheus_exporter.h"
#include "store/run_summary.h"

namespace pgwaitprof::service {

// Blocking (reads the history, runs the permutation tests): call it off the I/O thread.
// `just_done` picks the daemon's runs just done; `metrics` may be null (no /metrics).
void watch_changes(const std::filesystem::path& data_dir,
                   const std::function<bool(const store::RunSummary&)>& just_done,
                   exporters::MetricsServer* metrics);

}  // namespace pgwaitprof::service
