// The daemon as the regression watcher (issue 49 item 4): after each of its runs (configured or
// of a matrix plan), the change points that run brought to the history of its group (the runs
// of the same label, workload and load generator command: repeats of one configuration), each
// as pgwaitprof_change_point{group, history, metric} = the step and a warning in the log.
// Two histories are analysed: the data directory's (history="data_dir") and, when the daemon
// pushes its runs to a shared results database, the database's (history="results": every
// host's runs of the group, so a fleet's history is analysed where it is kept). Alertmanager
// does the notifying (deploy/prometheus/rules.yml: PgwaitprofChangePoint).
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "exporters/prometheus/prometheus_exporter.h"
#include "store/run_summary.h"

namespace pgwaitprof::service {

// Blocking (reads the histories, runs the permutation tests, queries the results database):
// call it off the I/O thread. `just_done` picks the daemon's runs just done in the data
// directory's history; `results_dsn` is the results database's ("" for none); `metrics` may be
// null (no /metrics).
void watch_changes(const std::filesystem::path& data_dir, const std::string& results_dsn,
                   const std::function<bool(const store::RunSummary&)>& just_done,
                   exporters::MetricsServer* metrics);

}  // namespace pgwaitprof::service
