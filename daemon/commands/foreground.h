// What the foreground commands (`run`, `matrix`) share: an io_context whose SIGINT/SIGTERM
// handling is in place before any work starts (so a Ctrl-C while a scratch cluster is created
// or pgbench -i runs still cleans up), their target (a connection string, the PG* environment,
// or a scratch cluster made for the command), and a sampler of it running beside their work.
#pragma once

#include <fmt/format.h>

#include <asio/co_spawn.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/io_context.hpp>
#include <asio/signal_set.hpp>
#include <csignal>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "base/expected.h"
#include "base/run_control.h"
#include "collectors/target_sampler.h"
#include "daemon/engine/scratch_cluster.h"

namespace pgwaitprof::commands {

// True when any PG* connection variable is set: then no target means "the environment's".
bool pg_environment_set();

// The default data directory of the foreground commands: $PGWAITPROF_DATA_DIR, else
// $XDG_DATA_HOME/pgwaitprof, else ~/.local/share/pgwaitprof.
std::filesystem::path default_data_dir();

struct LocalTarget {
  std::unique_ptr<engine::ScratchCluster> scratch;  // set when the command made its own cluster
  std::string conninfo;                             // "" = PG* environment variables
};

struct LocalTargetOptions {
  std::optional<std::string> target;
  int scale = 10;  // pgbench -i scale of a scratch cluster
  bool keep_cluster = false;
  bool create_wait_sampling = false;
  std::filesystem::path server_bin;  // the scratch cluster's build ("" = the installed one)
};

// `target` if given; else the PG* environment if any connection variable is set; else a new
// scratch cluster with pgbench tables (and pg_wait_sampling created when asked). Interruptible
// at every step; what was created is removed again on failure.
asio::awaitable<base::Expected<LocalTarget>> open_local_target(const LocalTargetOptions& options,
                                                               base::RunControl& control);

// The signals that end a foreground command: each one interrupts it the same way, so what it
// started is stopped and its report is still written (SIGKILL is the watchdog's, see
// engine/supervisor.h; SIGPIPE is ignored, and a closed standard output only ends the output).
inline constexpr int kTerminatingSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// Runs `work` on a fresh io_context. Every terminating signal interrupts `control` (the first
// prints `on_signal`, later ones that pgwaitprof is cleaning up). Returns what `work` returned;
// rethrows what it threw.
template <typename Result>
Result drive(const std::string& on_signal,
             std::function<asio::awaitable<Result>(base::RunControl&)> work) {
  asio::io_context io;
  asio::signal_set signals(io);
  for (const int signal_number : kTerminatingSignals) signals.add(signal_number);
  base::RunControl control(io.get_executor());
  std::function<void()> wait_signal = [&] {
    signals.async_wait([&](const std::error_code& error, int signal_number) {
      if (error) return;
      // stderr may be the terminal that just hung up: a failed write is ignored.
      std::cerr << (control.interrupted() ? "pgwaitprof: already stopping, cleaning up" : on_signal)
                << std::endl;
      std::cerr.clear();
      control.interrupt(fmt::format("interrupted by signal SIG{}", ::sigabbrev_np(signal_number)));
      wait_signal();
    });
  };
  wait_signal();
  std::optional<Result> result;
  std::exception_ptr failure;
  asio::co_spawn(io, work(control), [&](std::exception_ptr error, Result done) {
    failure = error;
    if (!error) result = std::move(done);
    signals.cancel();
  });
  io.run();
  if (failure) std::rethrow_exception(failure);
  return std::move(*result);
}

// Runs `body` beside a running sampler of `options`' target (fed by `remote` when the sampler
// runs on the server's host); the sampler is stopped when body ends, and both have finished
// when this returns.
template <typename Result>
asio::awaitable<Result> with_sampler(
    const collectors::SamplerOptions& options,
    std::function<asio::awaitable<Result>(collectors::TargetSampler&)> body,
    collectors::RemoteFeed* remote = nullptr) {
  using namespace asio::experimental::awaitable_operators;
  collectors::TargetSampler sampler(co_await asio::this_coro::executor, options);
  sampler.set_remote_feed(remote);
  std::optional<Result> result;
  auto work = [&]() -> asio::awaitable<void> {
    struct StopSampler {
      collectors::TargetSampler& sampler;
      ~StopSampler() { sampler.stop(); }
    } stop{sampler};
    result = co_await body(sampler);
  };
  co_await (sampler.run() && work());
  co_return std::move(*result);
}

}  // namespace pgwaitprof::commands
