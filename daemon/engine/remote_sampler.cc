// The SSH channel to a remote sampler: its start, the handshake, the delivery of its messages
// and the end of its ssh child.
#include "daemon/engine/remote_sampler.h"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <csignal>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/as_tuple.h"
#include "base/build_info.h"
#include "base/logging.h"
#include "collectors/conninfo.h"
#include "collectors/pg_session.h"
#include "daemon/engine/supervisor.h"

namespace pgwaitprof::engine {
namespace {

using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;
using base::kAsTuple;
// How long the remote side has to exit once its stdin is closed, before ssh is terminated.
constexpr auto kExitGrace = 3s;
// CPU profile batches kept for a run's collector that does not take them (it takes them every
// CpuProfileCollector::kPeriod, as they come): about two minutes' worth; the oldest go first,
// counted as lost.
constexpr size_t kMaxCpuBatches = 600;

auto remote_sampler_log() {
  static auto logger = base::component_logger("remote");
  return logger;
}

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             model::SystemClock::now().time_since_epoch())
      .count();
}

// True when the time passed; false when the wait was cancelled (the other branch of a race won).
asio::awaitable<bool> sleep_for(asio::any_io_executor executor,
                                model::SteadyClock::duration duration) {
  asio::steady_timer timer(executor, duration);
  auto [error] = co_await timer.async_wait(kAsTuple);
  co_return !error;
}

}  // namespace

std::vector<std::string> ssh_command_from_environment() {
  const char* command = std::getenv("PGWAITPROF_SSH_COMMAND");
  std::vector<std::string> words;
  std::istringstream stream(command != nullptr ? command : "");
  for (std::string word; stream >> word;) words.push_back(word);
  if (words.empty()) words.emplace_back("ssh");
  return words;
}

std::vector<std::string> ssh_argv(const RemoteSamplerOptions& options) {
  std::vector<std::string> argv = options.ssh_command;
  // No passphrase or password prompt (a missing key fails at once, with ssh's reason), no
  // terminal (the channel is binary), and a bounded wait for an unreachable host.
  for (const std::string& option :
       {std::string("BatchMode=yes"),
        fmt::format("ConnectTimeout={}", options.connect_timeout.count()),
        std::string("ServerAliveInterval=5"), std::string("ServerAliveCountMax=3")}) {
    argv.push_back("-o");
    argv.push_back(option);
  }
  argv.push_back("-T");
  if (options.host.port) {
    argv.push_back("-p");
    argv.push_back(std::to_string(*options.host.port));
  }
  argv.push_back(options.host.destination());
  argv.push_back(options.program + " __sample-remote");
  return argv;
}

std::unique_ptr<SshFeed> make_ssh_feed(const std::string& sampler_host, const std::string& program,
                                       asio::any_io_executor executor) {
  if (sampler_host.empty()) return nullptr;
  RemoteSamplerOptions options;
  options.host = *config::parse_sampler_host(sampler_host);
  options.program = program;
  options.ssh_command = ssh_command_from_environment();
  return std::make_unique<SshFeed>(executor, std::move(options));
}

std::string libpq_password(const std::string& conninfo) {
  // PQconnectStart reads the options, PGPASSWORD and the password file before it connects; its
  // first step starts a connection, which is dropped here before any authentication.
  const collectors::PgConnection connection(PQconnectStart(conninfo.c_str()));
  if (!connection) return "";
  const char* password = PQpass(connection.get());
  return password != nullptr ? password : "";
}

ClockEstimate estimate_clock(const std::vector<ClockPing>& pings) {
  ClockEstimate best{std::chrono::microseconds(0), std::chrono::microseconds::max()};
  for (const auto& ping : pings) {
    const auto round_trip = std::chrono::microseconds(ping.received_us - ping.sent_us);
    if (round_trip < std::chrono::microseconds(0) || round_trip >= best.round_trip) continue;
    // The remote clock was read somewhere in the round trip: the middle is the best guess.
    const int64_t middle_us = ping.sent_us + (ping.received_us - ping.sent_us) / 2;
    best = {std::chrono::microseconds(ping.answered_us - middle_us), round_trip};
  }
  if (best.round_trip == std::chrono::microseconds::max()) best.round_trip = {};
  return best;
}

SshFeed::SshFeed(asio::any_io_executor executor, RemoteSamplerOptions options)
    : executor_(executor), options_(std::move(options)) {
  host_.address = options_.host.text();
}

SshFeed::~SshFeed() {
  if (!child_) return;
  // Only when open() succeeded and the sampler stopped before deliver(): no loop is left to
  // wait on, and a killed child is reaped at once.
  ::kill(child_->pid, SIGKILL);
  channel_.reset();
  stderr_.reset();
  if (child_->pidfd >= 0) ::close(child_->pidfd);
  while (::waitpid(child_->pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  release_process_group(child_->pid);
}

std::string SshFeed::stderr_reason() const {
  std::string_view text = stderr_text_;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  if (const auto newline = text.rfind('\n'); newline != std::string_view::npos) {
    text.remove_prefix(newline + 1);
  }
  return collectors::mask_secrets(text);
}

std::string SshFeed::failure(const std::string& why) const {
  return fmt::format("could not start the sampler on \"{}\": {}", host_.address, why);
}

asio::awaitable<std::optional<std::string>> SshFeed::read_frame(std::chrono::seconds timeout) {
  asio::steady_timer timer(executor_, timeout);
  auto outcome = co_await (channel_->read() || timer.async_wait(kAsTuple));
  if (outcome.index() == 1) co_return std::nullopt;
  co_return std::get<0>(std::move(outcome));
}

asio::awaitable<void> SshFeed::read_stderr() {
  char buffer[4096];
  for (;;) {
    auto [error, got] = co_await stderr_->async_read_some(asio::buffer(buffer), kAsTuple);
    stderr_text_.append(buffer, got);
    // The last lines are what a failure's message needs.
    if (stderr_text_.size() > 65536) stderr_text_.erase(0, stderr_text_.size() - 32768);
    if (error) break;
  }
}

asio::awaitable<int> SshFeed::end_child() {
  if (!child_) co_return exit_code_;
  channel_->close_output();  // the remote side reads end of file and exits
  auto ended = co_await (read_stderr() || sleep_for(executor_, kExitGrace));
  if (ended.index() == 1) {
    ::kill(child_->pid, SIGTERM);
    co_await read_stderr();
  }
  exit_code_ = co_await wait_exit(*child_);
  child_.reset();
  channel_.reset();
  stderr_.reset();
  co_return exit_code_;
}

asio::awaitable<std::optional<collectors::CollectorError>> SshFeed::open(
    const collectors::SamplerOptions& options, model::SampleSink& intake) {
  ending_ = std::make_unique<base::AsyncEvent>(executor_);
  stopping_ = false;
  cpu_starts_ = cpu_answers_ = 0;
  auto child = spawn(ssh_argv(options_), {std::nullopt, {}, true});
  if (!child) {
    set_ending();
    co_return collectors::CollectorError{failure(child.error().message), "", false, true};
  }
  child_ = *child;
  channel_ = std::make_unique<base::FramedChannel>(executor_, child->stdout_fd, child->stdin_fd);
  stderr_ = std::make_unique<asio::posix::stream_descriptor>(executor_, child->stderr_fd);
  stderr_text_.clear();
  auto why = co_await handshake(options, intake);
  if (why.empty()) {
    // A new channel during a run's CPU profile (after a cut): the profile goes on from here.
    if (cpu_kept_) (void)send_cpu_start();
    co_return std::nullopt;
  }
  set_ending();
  const int exit_code = co_await end_child();
  // Without an answer of its own, ssh's (or the remote shell's) last word says why.
  if (why == "-") {
    const auto reason = stderr_reason();
    why = failure(reason.empty() ? fmt::format("ssh exited with code {}", exit_code)
                                 : fmt::format("{} (ssh exit code {})", reason, exit_code));
  }
  // Logged by the sampler, once per distinct error (a daemon's target retries it for as long as
  // the host is away).
  co_return collectors::CollectorError{why, "", false, true};
}

asio::awaitable<std::string> SshFeed::handshake(const collectors::SamplerOptions& options,
                                                model::SampleSink& intake) {
  const auto timeout = options_.connect_timeout + 10s;
  // Every message is named before the co_await: GCC 12 destroys a temporary of a co_await
  // expression twice.
  const std::string hello_sent =
      store::hello_message({store::kRemoteProtocolVersion, base::kVersion});
  if (!co_await channel_->write_now(hello_sent)) co_return "-";
  auto frame = co_await read_frame(timeout);
  if (!frame) {
    if (!channel_->decoder().pending().empty() || !channel_->error().empty()) {
      co_return failure("what it wrote is not pgwaitprof's channel (does a login script print?)");
    }
    co_return "-";
  }
  const auto hello = store::parse_hello(*frame);
  if (!hello) co_return failure("its first message is not a hello");
  if (hello->protocol != store::kRemoteProtocolVersion) {
    co_return fmt::format(
        "the sampler on \"{}\" speaks protocol {} (pgwaitprof {}), this host's pgwaitprof {} "
        "protocol {}: install the same version on both hosts",
        host_.address, hello->protocol, hello->version, base::kVersion,
        store::kRemoteProtocolVersion);
  }
  host_.program_version = hello->version;
  auto why = co_await set_clock(timeout);
  if (!why.empty()) co_return why;
  // The connection string and the password libpq would use here go on the channel, never on
  // a command line.
  const std::string start = store::start_message(options, libpq_password(options.conninfo));
  if (!co_await channel_->write_now(start)) co_return "-";
  for (;;) {
    auto answer = co_await read_frame(timeout);
    if (!answer) co_return "-";
    auto message = store::parse_message(*answer);
    if (message && message->first == "ready") break;
    std::string error;
    if (!on_message(*answer, intake, error)) co_return failure(error);
  }
  remote_sampler_log()->info(
      "remote sampler started host=\"{}\" remote_host={} version={} clock_offset_ms={:.3f} "
      "round_trip_ms={:.3f}",
      host_.address, host_.hostname, host_.program_version, host_.clock_offset_ms,
      host_.round_trip_ms);
  co_return "";
}

asio::awaitable<std::string> SshFeed::set_clock(std::chrono::seconds timeout) {
  std::vector<ClockPing> pings;
  for (int index = 0; index < kClockPings; ++index) {
    ClockPing ping{now_us(), 0, 0};
    const std::string ping_sent = store::ping_message(ping.sent_us);
    if (!co_await channel_->write_now(ping_sent)) co_return "-";
    for (;;) {
      auto answer = co_await read_frame(timeout);
      if (!answer) co_return "-";
      auto message = store::parse_message(*answer);
      if (message && message->first == "host") {
        store::read_host(message->second, host_);
        continue;
      }
      if (!message || message->first != "pong") co_return failure("it did not answer a ping");
      ping.received_us = now_us();
      ping.answered_us = message->second.value("at_us", int64_t{0});
      break;
    }
    pings.push_back(ping);
  }
  const auto clock = estimate_clock(pings);
  host_.clock_offset_ms = static_cast<double>(clock.offset.count()) / 1000;
  host_.round_trip_ms = static_cast<double>(clock.round_trip.count()) / 1000;
  if (std::chrono::abs(clock.offset) > kMaxClockOffset) {
    co_return fmt::format(
        "the clock of \"{}\" is {:.3f} s off this host's (more than {} s): a run aligns the "
        "server's samples with the load generator's by the clocks; keep both in step (chrony, "
        "ntpd) first",
        host_.address, static_cast<double>(clock.offset.count()) / 1e6,
        kMaxClockOffset.count() / 1000.0);
  }
  clock_ = store::WireClock{};
  clock_.offset = clock.offset;
  co_return "";
}

bool SshFeed::on_message(const std::string& payload, model::SampleSink& intake,
                         std::string& error) {
  auto message = store::parse_message(payload);
  if (!message) {
    error = "a message of the remote sampler could not be read";
    return false;
  }
  auto& [type, body] = *message;
  if (type == "error") {
    error = collectors::mask_secrets(body.value("message", "unknown error"));
    return false;
  }
  if (type == "host") {
    store::read_host(body, host_);
    return true;
  }
  if (type == "source" && !body.value("reason", "").empty()) {
    // Where the choice was made: on the server's host, not this one.
    body["reason"] =
        fmt::format("on {}: {}", host_.hostname.empty() ? host_.address : host_.hostname,
                    body.value("reason", ""));
  }
  try {
    if (!on_cpu_message(type, body)) store::deliver_message(type, body, clock_, intake);
  } catch (const std::exception& failure) {
    error = fmt::format("a \"{}\" message of the remote sampler could not be read: {}", type,
                        failure.what());
    return false;
  }
  return true;
}

bool SshFeed::on_cpu_message(const std::string& type, const nlohmann::json& body) {
  // Where it was decided or sampled: on the server's host, not this one.
  const auto where = host_.hostname.empty() ? host_.address : host_.hostname;
  if (type == "cpu_profile") {
    const auto refusal = collectors::mask_secrets(store::cpu_profile_refusal(body));
    cpu_refusal_ = refusal.empty() ? "" : fmt::format("on {}: {}", where, refusal);
    ++cpu_answers_;
    cpu_answered_.notify();
    return true;
  }
  if (type != "cpu") return false;
  cpu_drained_at_ = store::cpu_batch_drained_at(body, clock_);
  cpu_arrived_.notify();
  if (!cpu_kept_) return true;
  auto batch = store::cpu_batch_from(body, clock_);
  for (auto& note : batch.notes) note = fmt::format("on {}: {}", where, note);
  if (cpu_batches_.size() == kMaxCpuBatches) {
    const auto& oldest = cpu_batches_.front();
    batch.lost += oldest.lost + oldest.samples.size();
    cpu_batches_.pop_front();
  }
  cpu_batches_.push_back(std::move(batch));
  return true;
}

std::vector<model::CpuSampleBatch> SshFeed::take_cpu_batches() {
  std::vector<model::CpuSampleBatch> taken(std::make_move_iterator(cpu_batches_.begin()),
                                           std::make_move_iterator(cpu_batches_.end()));
  cpu_batches_.clear();
  return taken;
}

asio::awaitable<void> SshFeed::wait_cpu_batches(model::SteadyClock::time_point until,
                                                std::chrono::milliseconds timeout) {
  const auto deadline = model::SteadyClock::now() + timeout;
  while (cpu_drained_at_ < until) {
    const auto left = deadline - model::SteadyClock::now();
    if (left <= model::SteadyClock::duration::zero()) co_return;
    // Named, not in the condition: GCC 12 and a co_await inside a conditional expression.
    const bool arrived = co_await cpu_arrived_.wait_for(left);
    if (!arrived) co_return;
  }
}

bool SshFeed::send_cpu_start() {
  const std::string start = store::cpu_start_message(cpu_hz_);
  if (!channel_ || !channel_->send(start)) return false;
  ++cpu_starts_;
  return true;
}

void SshFeed::set_ending() {
  if (ending_) ending_->set();
  cpu_answered_.notify();
}

asio::awaitable<std::string> SshFeed::begin_cpu_profile(int hz) {
  if (cpu_kept_) {
    co_return fmt::format("the sampler on \"{}\" takes another run's CPU profile", host_.address);
  }
  cpu_hz_ = hz;
  cpu_kept_ = true;
  if (!ending_ || ending_->is_set() || !send_cpu_start()) {
    end_cpu_profile();
    co_return fmt::format("the channel to the sampler on \"{}\" is not open", host_.address);
  }
  // The remote side connects to the server to open it: as long as a connection may take.
  const auto deadline = model::SteadyClock::now() + options_.connect_timeout + 10s;
  while (cpu_answers_ < cpu_starts_ && !ending_->is_set()) {
    const auto left = deadline - model::SteadyClock::now();
    if (left <= model::SteadyClock::duration::zero()) break;
    const bool woken = co_await cpu_answered_.wait_for(left);
    (void)woken;
  }
  std::string refusal = cpu_refusal_;
  if (ending_->is_set()) {
    refusal = fmt::format("the channel to the sampler on \"{}\" ended", host_.address);
  } else if (cpu_answers_ < cpu_starts_) {
    refusal = fmt::format("the sampler on \"{}\" did not answer", host_.address);
  }
  // A stop after a refusal too: a late answer's profile is closed at once.
  if (!refusal.empty()) end_cpu_profile();
  co_return refusal;
}

void SshFeed::end_cpu_profile() {
  // The remote side closes its collector: nothing samples until the next run's start.
  if (cpu_kept_ && channel_) {
    const std::string stop = store::cpu_stop_message();
    (void)channel_->send(stop);
  }
  cpu_kept_ = false;
  cpu_batches_.clear();
}

asio::awaitable<std::string> SshFeed::deliver(model::SampleSink& intake) {
  std::string reason;
  auto read_frames = [&]() -> asio::awaitable<void> {
    for (;;) {
      auto frame = co_await channel_->read();
      if (!frame) break;
      if (!on_message(*frame, intake, reason)) break;
    }
    if (reason.empty()) reason = channel_->error();
    // However it ended, the remote side is told to end too.
    channel_->close_output();
    set_ending();
  };
  // ssh's stderr is read all along (the remote program's log lines come there too), so it
  // never fills and stalls ssh; once the channel ends, ssh has kExitGrace to exit.
  auto kill_late = [&]() -> asio::awaitable<void> {
    co_await ending_->wait();
    // Only when ssh has not ended by itself meanwhile (then this wait is cancelled).
    const bool waited = co_await sleep_for(executor_, kExitGrace);
    if (waited && child_) ::kill(child_->pid, SIGTERM);
    (void)co_await sleep_for(executor_, kExitGrace);
  };
  // Written meanwhile: the runs' CPU profile requests.
  co_await ((read_frames() && read_stderr() && channel_->write_loop()) || kill_late());
  const int exit_code = co_await end_child();
  if (stopping_) co_return "sampler stopped";
  const auto said = stderr_reason();
  const auto ended = exit_code > 128 ? fmt::format("ssh ended by signal {}", exit_code - 128)
                                     : fmt::format("ssh exit code {}", exit_code);
  co_return fmt::format("the channel to the sampler on \"{}\" ended: {}", host_.address,
                        !reason.empty() ? reason
                        : !said.empty() ? fmt::format("{} ({})", said, ended)
                                        : ended);
}

void SshFeed::close() {
  stopping_ = true;
  // The remote side reads end of file and exits; ssh then ends, and deliver() with it.
  if (channel_) channel_->close_output();
  set_ending();
}

}  // namespace pgwaitprof::engine
