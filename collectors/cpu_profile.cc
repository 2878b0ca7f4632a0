// The CPU profile collector: which samples are the server's, under which group, and the
// checks before it opens.
#include "collectors/cpu_profile.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/logging.h"
#include "collectors/kernel.h"

namespace pgwaitprof::collectors {
namespace {

// Past this many pids seen, the cache of their groups starts again (bounded memory).
constexpr size_t kMaxKnownPids = 1 << 16;
// Processes not sampled for this many collections have their maps forgotten.
constexpr uint64_t kForgetEvery = 50;

constexpr std::array<std::string_view, 16> kBackgroundTypes = {"autovacuum launcher",
                                                               "autovacuum worker",
                                                               "logical replication launcher",
                                                               "logical replication worker",
                                                               "parallel worker",
                                                               "background writer",
                                                               "checkpointer",
                                                               "walwriter",
                                                               "walsender",
                                                               "walreceiver",
                                                               "walsummarizer",
                                                               "archiver",
                                                               "startup",
                                                               "stats collector",
                                                               "logger",
                                                               "slotsync worker"};

auto cpu_profile_log() {
  static auto logger = base::component_logger("cpu_profile");
  return logger;
}

std::string read_cmdline(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/cmdline");
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace

base::Status check_process_readable(pid_t postmaster) {
  const auto path = fmt::format("/proc/{}/maps", postmaster);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  char byte = 0;
  const bool readable = fd >= 0 && ::read(fd, &byte, 1) == 1;
  const int error = errno;
  if (fd >= 0) ::close(fd);
  if (readable) return std::nullopt;
  return base::Error{fmt::format(
      "could not read \"{}\" of the server's postmaster: {}; run pgwaitprof as the server's "
      "user or as root",
      path, std::strerror(error))};
}

std::string backend_type_from_cmdline(std::string_view cmdline) {
  std::string text(cmdline);
  std::replace(text.begin(), text.end(), '\0', ' ');
  constexpr std::string_view kPrefix = "postgres: ";
  if (!text.starts_with(kPrefix)) return std::string(model::kCpuClientBackends);
  std::string_view rest = std::string_view(text).substr(kPrefix.size());
  // With cluster_name set the title reads "postgres: main: walwriter".
  for (int part = 0; part < 2; ++part) {
    for (const auto type : kBackgroundTypes) {
      if (rest.starts_with(type)) return std::string(type);
    }
    const auto colon = rest.find(": ");
    if (colon == std::string_view::npos) break;
    rest = rest.substr(colon + 2);
  }
  return std::string(model::kCpuClientBackends);
}

void CpuProfileCollector::read_types(const model::Snapshot* latest) {
  if (latest == nullptr || latest->taken_at_steady == types_of_) return;
  types_of_ = latest->taken_at_steady;
  types_.clear();
  for (const auto& backend : latest->backends) {
    const bool own = backend.application_name == kCpuOwnBackends ||
                     std::find(own_pids_.begin(), own_pids_.end(), backend.pid) != own_pids_.end();
    types_[backend.pid] = own ? std::string(kCpuOwnBackends) : backend.backend_type;
  }
}

const std::string& CpuProfileCollector::group_of(pid_t pid) {
  // The snapshot and own_pids_ name backends by the server's pids, samples by this host's.
  const int32_t server_pid = pid == postmaster_ ? 0 : processes_.server_pid(pid);
  if (auto typed = types_.find(server_pid); typed != types_.end() && !typed->second.empty()) {
    return groups_[pid] = typed->second;
  }
  if (auto known = groups_.find(pid); known != groups_.end()) return known->second;
  if (groups_.size() >= kMaxKnownPids) groups_.clear();
  std::string group;
  if (server_pid > 0 &&
      std::find(own_pids_.begin(), own_pids_.end(), server_pid) != own_pids_.end()) {
    group = kCpuOwnBackends;
  } else if (pid == postmaster_) {
    group = "postmaster";
  } else if (pid > 0 && read_parent_pid(pid) == postmaster_) {
    group = backend_type_from_cmdline(read_cmdline(pid));
  }
  return groups_[pid] = std::move(group);
}

void CpuProfileCollector::add(const cpu::PerfSample& raw, model::CpuSampleBatch& batch) {
  const auto& group = group_of(raw.pid);
  if (group.empty()) return;
  model::CpuSample sample;
  sample.backend_type = group;
  sample.at =
      model::SteadyClock::time_point(std::chrono::duration_cast<model::SteadyClock::duration>(
          std::chrono::nanoseconds(raw.time_ns)));
  sample.frames.reserve(raw.frames.size());
  // Leaf first in the chain, root first in the sample; a caller's address is its return
  // address, one past the call, which may be another function's first byte.
  for (size_t index = raw.frames.size(); index-- > 0;) {
    const auto [address, kernel] = raw.frames[index];
    const uint64_t lookup = index == 0 || address == 0 ? address : address - 1;
    sample.frames.push_back(kernel ? symbolizer_.kernel_frame(lookup)
                                   : symbolizer_.user_frame(raw.pid, lookup));
  }
  batch.samples.push_back(std::move(sample));
}

asio::awaitable<CollectResult> CpuProfileCollector::collect(CollectContext& context) {
  read_types(context.latest);
  model::CpuSampleBatch batch{hz_, events_->cpus(), 0, {}, {}};
  batch.lost = events_->drain([&](const cpu::PerfSample& raw) { add(raw, batch); });
  batch.notes = symbolizer_.take_notes();
  for (const auto& note : batch.notes) cpu_profile_log()->warn("cpu profile: {}", note);
  if (++collections_ % kForgetEvery == 0) symbolizer_.forget_idle_processes();
  if (context.sink != nullptr) context.sink->on_cpu_samples(batch);
  co_return std::nullopt;
}

asio::awaitable<base::Expected<std::unique_ptr<Collector>>> open_cpu_profile(
    PgSession& session, config::LocalMode local, int hz, std::vector<pid_t> own_pids) {
  using Result = base::Expected<std::unique_ptr<Collector>>;
  if (local == config::LocalMode::kNo) {
    co_return Result(base::Error{"the target is configured as not on this host (local: no)"});
  }
  // A server in a container or a chroot on this host names its processes by its own pids: the
  // samples' pids are this host's.
  auto found = co_await find_session_server(session);
  if (!found && local != config::LocalMode::kYes) {
    const auto reason = not_local_reason(found.error());
    co_return Result(base::Error{
        reason == "the server is on another host" ? "the server is not on this host" : reason});
  }
  ServerProcesses processes = found ? *found : ServerProcesses();
  const auto postmaster =
      found ? std::optional<pid_t>(found->postmaster()) : read_parent_pid(session.backend_pid());
  if (!postmaster) co_return Result(base::Error{"could not find the server's postmaster"});
  if (auto unreadable = check_process_readable(*postmaster)) co_return Result(*unreadable);
  auto events = cpu::PerfEvents::open(hz);
  if (!events) co_return Result(events.error());
  own_pids.push_back(session.backend_pid());
  co_return Result(std::unique_ptr<Collector>(new CpuProfileCollector(
      std::move(*events), hz, *postmaster, std::move(own_pids), std::move(processes))));
}

}  // namespace pgwaitprof::collectors
