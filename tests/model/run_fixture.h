// A finished run with just what the compare and matrix tests look at: its variant, clients,
// repeat, status and pgbench's tps (latency following from them).
#pragma once

#include <string>

#include "model/run.h"

namespace pgwaitprof::model {

inline Run run_of(const std::string& variant, int clients, double tps, int repeat = Run{}.repeat,
                  RunStatus status = RunStatus::kCompleted) {
  Run run;
  run.variant = variant;
  run.clients = clients;
  run.repeat = repeat;
  run.status = status;
  LoadgenSummary summary;
  summary.tps = tps;
  summary.latency_avg = base::Milliseconds(1000.0 * clients / tps);
  run.loadgen = summary;
  return run;
}

}  // namespace pgwaitprof::model
