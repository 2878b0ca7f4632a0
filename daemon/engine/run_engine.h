// The run engine: one profiled benchmark run, used alike by `run`, `matrix` and the daemon. It
// prepares the target (pgbench tables, the workload's set-up), samples before the load generator
// starts and until it has ended, aligns pgbench's progress with the sampled timeline, and
// always writes the run directory, marked interrupted or failed when the run was. Every step
// returns its error as a value; the run's status says which step failed and why.
#pragma once

#include <asio/awaitable.hpp>

#include "base/run_control.h"
#include "collectors/target_sampler.h"
#include "daemon/engine/run_request.h"

namespace pgwaitprof::engine {

asio::awaitable<RunOutcome> execute_run(collectors::TargetSampler& sampler, RunRequest request,
                                        RunObserver& observer, base::RunControl& control);

}  // namespace pgwaitprof::engine
