// The remote sampler's end of the channel.
#include "daemon/commands/remote_sample.h"

#include <fmt/format.h>
#include <unistd.h>

#include <asio/co_spawn.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "base/as_tuple.h"
#include "base/build_info.h"
#include "base/fault_injection.h"
#include "base/frame_channel.h"
#include "base/logging.h"
#include "collectors/conninfo.h"
#include "collectors/cpu_profile.h"
#include "collectors/host.h"
#include "collectors/kernel.h"
#include "collectors/target_sampler.h"
#include "store/sample_wire.h"

namespace pgwaitprof::commands {
namespace {

using namespace std::chrono_literals;
constexpr int kExitProtocol = 3;

// Until the start message: the hello, then pings answered. False at end of file (or a hello
// of another protocol: `exit_code` says which).
asio::awaitable<std::optional<nlohmann::json>> greet(base::FramedChannel& channel, int& exit_code) {
  // The fault tests' other version (tests/integration/remote_sampler_test.sh).
  const int protocol =
      store::kRemoteProtocolVersion + (base::fault_fails("remote-protocol") ? 1 : 0);
  // Messages are named before the co_await: GCC 12 destroys a temporary of a co_await
  // expression twice.
  const std::string hello_sent = store::hello_message({protocol, base::kVersion});
  if (!co_await channel.write_now(hello_sent)) co_return std::nullopt;
  auto first = co_await channel.read();
  const auto hello = first ? store::parse_hello(*first) : std::nullopt;
  if (!hello || hello->protocol != protocol) {
    if (hello) {
      std::cerr << fmt::format(
          "pgwaitprof: the load generator's host speaks protocol {} (pgwaitprof {}), this host's "
          "pgwaitprof {} protocol {}\n",
          hello->protocol, hello->version, base::kVersion, protocol);
      exit_code = kExitProtocol;
    }
    co_return std::nullopt;
  }
  model::Environment host;
  collectors::describe_host(host);
  const std::string host_sent = store::host_message(host);
  (void)co_await channel.write_now(host_sent);
  // A clock off by 5 s, for the fault tests' refusal.
  const int64_t skew_us = base::fault_fails("remote-clock") ? 5'000'000 : 0;
  store::WireClock clock;
  for (;;) {
    auto frame = co_await channel.read();
    if (!frame) co_return std::nullopt;
    auto message = store::parse_message(*frame);
    if (!message) continue;
    if (message->first == "start") co_return std::move(message->second);
    if (message->first == "ping") {
      const int64_t at_us = clock.to_wire(model::SystemClock::now()) + skew_us;
      const std::string pong =
          store::pong_message(message->second.value("sent_us", int64_t{0}), at_us);
      (void)co_await channel.write_now(pong);
    }
  }
}

// A "cpu_start" (its rate) or a "cpu_stop" of the other end.
struct CpuRequest {
  bool start = false;
  int hz = 0;
};

// The next CPU profile request; nullopt at the channel's end. Nothing else comes from the other
// end after the start.
asio::awaitable<std::optional<CpuRequest>> next_cpu_request(base::FramedChannel& channel) {
  // A for loop with co_return, not `while (co_await ...) {}` falling off the end: GCC 12
  // compiles that coroutine into an illegal instruction.
  for (;;) {
    auto frame = co_await channel.read();
    if (!frame) co_return std::nullopt;
    auto message = store::parse_message(*frame);
    if (!message) continue;
    if (message->first == "cpu_start" || message->first == "cpu_stop") {
      const CpuRequest request{message->first == "cpu_start", store::cpu_start_hz(message->second)};
      co_return request;
    }
  }
}

// The CPU profile at `hz` on `session` (pgwaitprof's backends: it and the sampler's), answered on
// the channel either way: the collector, or none and why not.
asio::awaitable<std::unique_ptr<collectors::Collector>> open_cpu_profile_here(
    base::FramedChannel& channel, const collectors::TargetSampler& sampler,
    collectors::PgSession& session, int hz) {
  const auto& options = sampler.options();
  std::string refusal;
  std::unique_ptr<collectors::Collector> collector;
  if (hz <= 0) {
    refusal = "no CPU profile rate";
  } else if (auto error = co_await session.connect(options.conninfo, options.connect_timeout)) {
    refusal = "could not connect: " + error->message;
  } else {
    std::vector<pid_t> own_pids{sampler.backend_pid()};
    auto opened = co_await collectors::open_cpu_profile(session, options.local, hz, own_pids);
    if (opened) {
      collector = std::move(*opened);
    } else {
      refusal = opened.error().message;
    }
  }
  channel.send(store::cpu_profile_message(collectors::mask_secrets(refusal)));
  co_return collector;
}

// The batch of one collection of the CPU profile.
struct DrainedCpuBatch : model::SampleSink {
  std::optional<model::CpuSampleBatch> batch;
  void on_snapshot(const model::Snapshot& /*snapshot*/) override {}
  void on_profile_delta(const model::Profile& /*delta*/,
                        model::SystemClock::time_point /*read_at*/) override {}
  void on_cpu_samples(const model::CpuSampleBatch& drained) override { batch = drained; }
};

// Its samples every kPeriod, named here (this host has the server's binaries), as "cpu"
// messages with the time of their drain; until cancelled (the next request or the channel's
// end) or the other end stops reading.
asio::awaitable<void> drain_cpu_profile(base::FramedChannel& channel,
                                        collectors::Collector& collector,
                                        const collectors::TargetSampler& sampler,
                                        const store::WireClock& clock) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    timer.expires_after(collectors::CpuProfileCollector::kPeriod);
    auto [error] = co_await timer.async_wait(base::kAsTuple);
    if (error) co_return;
    DrainedCpuBatch drained;
    collectors::CollectContext context{nullptr, &drained, nullptr, sampler.latest_snapshot(),
                                       model::SteadyClock::now()};
    (void)co_await collector.collect(context);
    // A full queue: the other end does not read (the sampler's own messages stop it).
    if (drained.batch && !channel.send(store::cpu_message(*drained.batch, context.now, clock))) {
      co_return;
    }
  }
}

// One run's CPU profile, from its "cpu_start" (at `hz`) to the next request: the collector and
// its session are closed before this returns, so that nothing samples between runs. The next
// request, or nullopt at the channel's end (or when the other end stopped reading).
asio::awaitable<std::optional<CpuRequest>> profile_until_request(
    base::FramedChannel& channel, const collectors::TargetSampler& sampler,
    const store::WireClock& clock, int hz) {
  using namespace asio::experimental::awaitable_operators;
  collectors::PgSession session(co_await asio::this_coro::executor);
  const collectors::OwnSession own(session);  // pgwaitprof's backend in the kernel view
  auto collector = co_await open_cpu_profile_here(channel, sampler, session, hz);
  if (!collector) {
    auto next = co_await next_cpu_request(channel);
    co_return next;
  }
  auto outcome = co_await (next_cpu_request(channel) ||
                           drain_cpu_profile(channel, *collector, sampler, clock));
  if (outcome.index() == 1) co_return std::nullopt;
  co_return std::get<0>(std::move(outcome));
}

// The CPU profile requests of the other end until the channel ends: a profile from each start
// to the next request, none between a stop and the next start.
asio::awaitable<void> serve_cpu_profiles(base::FramedChannel& channel,
                                         const collectors::TargetSampler& sampler,
                                         const store::WireClock& clock) {
  auto request = co_await next_cpu_request(channel);
  while (request) {
    if (request->start) {
      request = co_await profile_until_request(channel, sampler, clock, request->hz);
    } else {
      request = co_await next_cpu_request(channel);
    }
  }
}

// Samples until stdin ends; the first sample (or why none came) is told first ("ready" or an
// error), then the CPU profile requests are served.
asio::awaitable<void> sample(base::FramedChannel& channel, collectors::TargetSampler& sampler,
                             const store::WireClock& clock) {
  using namespace asio::experimental::awaitable_operators;
  auto supervise = [&]() -> asio::awaitable<void> {
    const auto first_within = sampler.options().connect_timeout + 10s;
    if (co_await sampler.wait_for_sample(
            std::chrono::duration_cast<std::chrono::milliseconds>(first_within))) {
      channel.send(nlohmann::json{{"type", "ready"}}.dump());
      co_await serve_cpu_profiles(channel, sampler, clock);
    } else {
      const auto& error = sampler.last_error();
      channel.send(store::error_message(error.empty() ? "no sample of the server" : error));
    }
    sampler.stop();
    channel.close_write();
  };
  co_await (sampler.run() && channel.write_loop() && supervise());
}

asio::awaitable<int> serve() {
  auto executor = co_await asio::this_coro::executor;
  // Our own copies: std::cout and std::cin are not used while the channel is on 0 and 1.
  base::FramedChannel channel(executor, ::dup(STDIN_FILENO), ::dup(STDOUT_FILENO));
  int exit_code = 0;
  auto start = co_await greet(channel, exit_code);
  if (!start) co_return exit_code;
  auto options = store::parse_start(*start);
  collectors::TargetSampler sampler(executor, options);
  // A sink that cannot keep up (the other end stopped reading) ends the sampling.
  const store::WireClock clock;
  store::WireSink sink(clock, [&](std::string message) {
    if (!channel.send(message)) sampler.stop();
  });
  sampler.add_sink(&sink);
  co_await sample(channel, sampler, clock);
  sampler.remove_sink(&sink);
  co_return channel.error().empty() ? 0 : 1;
}

}  // namespace

int sample_remote_main() {
  // Its log lines reach the other end's ssh stderr: warnings and errors only.
  base::set_log_level("warn");
  asio::io_context io;
  int exit_code = 1;
  asio::co_spawn(io, serve(), [&](const std::exception_ptr& failure, int code) {
    if (!failure) {
      exit_code = code;
      return;
    }
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& error) {
      std::cerr << "pgwaitprof: " << error.what() << '\n';
    }
  });
  io.run();
  return exit_code;
}

}  // namespace pgwaitprof::commands
