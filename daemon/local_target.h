// What the foreground commands (`run`, `matrix`) share: resolving their target (a connection
// string, the PG* environment, or a scratch cluster made for the command), and driving their
// work on a fresh io_context beside a sampler of that target, with SIGINT/SIGTERM interrupting
// the work so that it still writes its reports.
#pragma once

#include <csignal>
#include <exception>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <asio/co_spawn.hpp>
#include <asio/io_context.hpp>
#include <asio/signal_set.hpp>

#include "collectors/target_sampler.h"
#include "daemon/run_orchestrator.h"
#include "daemon/scratch_cluster.h"

namespace pgwaitprof::daemon {

struct LocalTarget {
  std::unique_ptr<ScratchCluster> scratch;  // set when the command made its own cluster
  std::string conninfo;                     // "" = PG* environment variables
};

// `target` if given; else the PG* environment if any connection variable is set; else a new
// scratch cluster with pgbench tables at `scale` (and pg_wait_sampling created when asked).
LocalTarget open_local_target(const std::optional<std::string>& target, int scale, bool keep_cluster,
                              bool create_wait_sampling);

// Runs `work` to completion next to a running sampler; a signal prints `on_signal` and
// interrupts `control`. Rethrows what `work` threw.
template <typename Result>
Result run_with_sampler(const collectors::SamplerOptions& options, RunControl& control,
                        const std::string& on_signal,
                        std::function<asio::awaitable<Result>(collectors::TargetSampler&)> work) {
  asio::io_context io;
  collectors::TargetSampler sampler(io.get_executor(), options);
  asio::co_spawn(io, sampler.run(), [](std::exception_ptr failure) {
    if (failure) std::cerr << "pgwaitprof: the sampler stopped unexpectedly\n";
  });
  asio::signal_set signals(io, SIGINT, SIGTERM);
  std::function<void()> wait_signal = [&] {
    signals.async_wait([&](const std::error_code& error, int) {
      if (error) return;
      std::cerr << on_signal << '\n';
      control.interrupt();
      wait_signal();
    });
  };
  wait_signal();
  std::optional<Result> result;
  std::exception_ptr failure;
  asio::co_spawn(io, work(sampler), [&](std::exception_ptr error, Result done) {
    failure = error;
    if (!error) result = std::move(done);
    sampler.stop();
    signals.cancel();
  });
  io.run();
  if (failure) std::rethrow_exception(failure);
  return std::move(*result);
}

}  // namespace pgwaitprof::daemon
