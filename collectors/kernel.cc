// /proc readers for the kernel's view of local backends.
#include "collectors/kernel.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <mutex>

#include "base/logging.h"
#include "base/regular_file.h"

namespace pgwaitprof::collectors {
namespace {

auto kernel_log() {
  static auto logger = base::component_logger("kernel");
  return logger;
}

// Says once per process that descriptors ran out: every later /proc read may fail the same way.
void note_descriptor_shortage(int error) {
  static std::atomic_flag said;
  if ((error == EMFILE || error == ENFILE) && !said.test_and_set()) {
    kernel_log()->warn(
        "out of file descriptors: backends' /proc files cannot be opened, so their kernel "
        "states and times are missing until some close open_files={} limit={}",
        ProcessStates::descriptors_open(), ProcessStates::descriptor_cap() * 4);
  }
}

int open_proc(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) note_descriptor_shortage(errno);
  return fd;
}

// The descriptors ProcessStates hold over the whole process.
std::atomic<size_t> descriptors_open_{0};

// The whole of a /proc file; "" when it cannot be read (the process has gone).
std::string read_small_file(const std::string& path) {
  const int fd = open_proc(path);
  return fd < 0 ? std::string() : base::read_and_close(fd);
}

std::string_view after_command(std::string_view stat) {
  const auto close = stat.rfind(')');
  if (close == std::string_view::npos) return {};
  stat.remove_prefix(close + 1);
  while (!stat.empty() && stat.front() == ' ') stat.remove_prefix(1);
  return stat;
}

// The time between two nanosecond counter readings; 0 when the counter went back (a thread of
// the process exited, taking its time with it).
base::Seconds seconds_between(uint64_t before, uint64_t after) {
  return base::Seconds(after > before ? static_cast<double>(after - before) / 1e9 : 0);
}

}  // namespace

std::optional<Schedstat> parse_schedstat(std::string_view text) {
  Schedstat stat;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [after_cpu, cpu_error] = std::from_chars(begin, end, stat.on_cpu_ns);
  if (cpu_error != std::errc() || after_cpu == end || *after_cpu != ' ') return std::nullopt;
  auto [after_wait, wait_error] = std::from_chars(after_cpu + 1, end, stat.runqueue_ns);
  if (wait_error != std::errc()) return std::nullopt;
  return stat;
}

std::optional<char> parse_process_state(std::string_view stat) {
  const auto rest = after_command(stat);
  if (rest.empty()) return std::nullopt;
  return rest.front();
}

std::optional<pid_t> parse_parent_pid(std::string_view stat) {
  auto rest = after_command(stat);
  const auto space = rest.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  rest.remove_prefix(space + 1);
  pid_t parent = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), parent);
  if (error != std::errc()) return std::nullopt;
  return parent;
}

std::optional<base::Seconds> parse_reaped_children_cpu(std::string_view stat,
                                                       long ticks_per_second) {
  auto rest = after_command(stat);
  // After the command: state (field 3) ... cutime (16) and cstime (17).
  for (int field = 3; field < 16; ++field) {
    const auto space = rest.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(space + 1);
  }
  uint64_t ticks[2] = {0, 0};
  for (auto& value : ticks) {
    const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
    if (error != std::errc() || ticks_per_second <= 0) return std::nullopt;
    rest.remove_prefix(static_cast<size_t>(end - rest.data()));
    if (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  }
  return base::Seconds(static_cast<double>(ticks[0] + ticks[1]) /
                       static_cast<double>(ticks_per_second));
}

std::optional<base::Seconds> read_reaped_children_cpu(pid_t pid) {
  static const long ticks_per_second = ::sysconf(_SC_CLK_TCK);
  return parse_reaped_children_cpu(read_small_file("/proc/" + std::to_string(pid) + "/stat"),
                                   ticks_per_second);
}

base::Seconds ExitedTime::next(base::Seconds reaped, base::Seconds counted_before) {
  const auto before = reaped_;
  reaped_ = reaped;
  if (!before) return base::Seconds(0);
  // The reaped time can only grow; a new postmaster (a restart) starts again from its own.
  const base::Seconds grown = reaped > *before ? reaped - *before : base::Seconds(0);
  const base::Seconds owed = owed_ + counted_before;
  // What stays owed after this reading is at most what this reading's gone backends owe.
  owed_ = std::min(counted_before, std::max(base::Seconds(0), owed - grown));
  return std::max(base::Seconds(0), grown - owed);
}

std::optional<Schedstat> read_schedstat(pid_t pid) {
  return parse_schedstat(read_small_file("/proc/" + std::to_string(pid) + "/schedstat"));
}

std::optional<Schedstat> read_process_schedstat(pid_t pid) {
  std::error_code error;
  Schedstat total;
  bool any = false;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", error)) {
    if (const auto stat = parse_schedstat(read_small_file(task.path() / "schedstat"))) {
      total.on_cpu_ns += stat->on_cpu_ns;
      total.runqueue_ns += stat->runqueue_ns;
      any = true;
    }
  }
  if (!any) return std::nullopt;
  return total;
}

std::optional<pid_t> read_parent_pid(pid_t pid) {
  return parse_parent_pid(read_small_file("/proc/" + std::to_string(pid) + "/stat"));
}

std::optional<char> read_process_state(pid_t pid) {
  return parse_process_state(read_small_file("/proc/" + std::to_string(pid) + "/stat"));
}

bool server_is_local(pid_t backend_pid, const std::string& data_directory) {
  const auto found = find_server_processes(backend_pid, data_directory, 0);
  return found && !found->own_root();
}

asio::awaitable<bool> session_is_local(PgSession& session) {
  co_return (co_await find_session_server(session)).ok();
}

asio::awaitable<CollectResult> KernelStage::prepare(PgSession& session) {
  local_ = false;
  previous_.clear();
  states_.clear();
  exited_.reset();
  last_reading_.reset();
  last_round_.reset();
  if (mode_ == config::LocalMode::kNo) co_return std::nullopt;
  sampler_pid_ = session.backend_pid();
  host_ = session.host();
  port_ = session.port();
  // A server in a container or a chroot on this host names its processes by its own pids.
  auto found = co_await find_session_server(session);
  processes_ = found ? *found : ServerProcesses();
  local_ = found || mode_ == config::LocalMode::kYes;
  // The sampler's backend is the postmaster's child; the postmaster sleeps in epoll_wait.
  const auto postmaster =
      found ? std::optional<pid_t>(found->postmaster()) : read_parent_pid(sampler_pid_);
  postmaster_ = postmaster.value_or(-1);
  const bool wchan = local_ && postmaster && states_.check_wchan(*postmaster);
  kernel_log()->info(
      "kernel view {} backend_pid={} states_from=\"{}\"{}",
      local_ ? "on: the server runs on this host" : "off: the server is not on this host",
      sampler_pid_, wchan ? "wchan, then stat" : "stat",
      processes_.description().empty() ? std::string()
                                       : " server=\"" + processes_.description() + "\"");
  co_return std::nullopt;
}

size_t ProcessStates::descriptors_open() { return descriptors_open_.load(); }

size_t ProcessStates::descriptor_cap() {
  // Read each time (a cheap system call, once per file opened): the limit can be changed.
  struct rlimit limit {};
  const rlim_t soft = ::getrlimit(RLIMIT_NOFILE, &limit) == 0 ? limit.rlim_cur : 1024;
  return static_cast<size_t>(std::max<rlim_t>(16, std::min<rlim_t>(soft, 1 << 20) / 4));
}

ProcessStates::File* ProcessStates::file(int32_t pid, int64_t backend_start) {
  auto found = files_.find(pid);
  if (found != files_.end() && found->second.backend_start != backend_start) {
    if (found->second.seen_in == readings_) --seen_;
    close_file(found->second);  // the pid was reused
    files_.erase(found);
    found = files_.end();
  }
  if (found != files_.end()) return &found->second;
  const size_t wanted = wchan_ ? 2 : 1;
  if (files_.size() >= kMaxOpen) return nullptr;
  if (descriptors_open_.fetch_add(wanted) + wanted > descriptor_cap()) {
    descriptors_open_.fetch_sub(wanted);
    static std::atomic_flag said;
    if (!said.test_and_set()) {
      kernel_log()->warn(
          "many backends' /proc files are open: further ones are read the long way (an open and "
          "a close per read) open_files={} cap={}",
          descriptors_open_.load(), descriptor_cap());
    }
    return nullptr;
  }
  const std::string path = "/proc/" + std::to_string(pid);
  const int fd = open_proc(path + "/stat");
  const int wchan_fd = fd >= 0 && wchan_ ? open_proc(path + "/wchan") : -1;
  if (fd < 0 || (wchan_ && wchan_fd < 0)) {
    if (fd >= 0) ::close(fd);
    descriptors_open_.fetch_sub(wanted);
    return nullptr;
  }
  return &files_.emplace(pid, File{backend_start, fd, wchan_fd, 0}).first->second;
}

void ProcessStates::seen(int32_t pid, int64_t backend_start) {
  const auto found = files_.find(pid);
  if (found == files_.end() || found->second.backend_start != backend_start) return;
  if (found->second.seen_in != readings_) ++seen_;
  found->second.seen_in = readings_;
}

std::optional<char> ProcessStates::state(int32_t pid, int64_t backend_start) {
  File* open = file(pid, backend_start);
  if (open == nullptr) return read_process_state(pid);
  if (open->seen_in != readings_) ++seen_;
  open->seen_in = readings_;
  // The kernel writes each file anew for every read from its start.
  char buffer[512];
  if (open->wchan_fd >= 0) {
    const ssize_t got = ::pread(open->wchan_fd, buffer, sizeof buffer, 0);
    if (got == 1 && buffer[0] == '0') return 'R';
  }
  const ssize_t got = ::pread(open->fd, buffer, sizeof buffer, 0);
  if (got <= 0) {
    close_file(*open);  // the process has gone
    files_.erase(pid);
    --seen_;
    return std::nullopt;
  }
  return parse_process_state(std::string_view(buffer, static_cast<size_t>(got)));
}

bool ProcessStates::check_wchan(pid_t sleeping_pid) {
  clear();
  wchan_ = false;
  const int fd =
      ::open(("/proc/" + std::to_string(sleeping_pid) + "/wchan").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buffer[128];
  for (int attempt = 0; attempt < 3 && !wchan_; ++attempt) {
    const ssize_t got = ::pread(fd, buffer, sizeof buffer, 0);
    wchan_ = got > 1 || (got == 1 && buffer[0] != '0');
  }
  ::close(fd);
  return wchan_;
}

void ProcessStates::next_reading() {
  // Close the files of backends the last reading did not have (they exited). A look at every
  // file only when some were missing.
  if (seen_ < files_.size()) {
    for (auto open = files_.begin(); open != files_.end();) {
      if (open->second.seen_in == readings_) {
        ++open;
        continue;
      }
      close_file(open->second);
      open = files_.erase(open);
    }
  }
  ++readings_;
  seen_ = 0;
}

void ProcessStates::close_file(const File& file) {
  ::close(file.fd);
  size_t closed = 1;
  if (file.wchan_fd >= 0) {
    ::close(file.wchan_fd);
    ++closed;
  }
  descriptors_open_.fetch_sub(closed);
}

void ProcessStates::clear() {
  for (const auto& [pid, open] : files_) close_file(open);
  files_.clear();
  seen_ = 0;
}

void KernelStage::read_states(model::Snapshot& snapshot) {
  states_.next_reading();
  // pgwaitprof's own sessions (the run's connection) count with the sampler's in the kernel's
  // times (add_kernel_times): their states are not the load's either, so that the client
  // backends sampled running compare like with like (a run connection waiting for a CPU on a
  // loaded host was 0.19 AAS sampled running that the kernel's client row no longer held).
  const auto own = OwnSession::backends_on(host_, port_);
  for (auto& backend : snapshot.backends) {
    if (own.contains(backend.pid)) {
      backend.kernel_state = 0;
      continue;
    }
    // Only a backend PostgreSQL says is not waiting needs the kernel's word, and only when the
    // source did not read it as it sampled.
    const pid_t process = processes_.host_pid(backend.pid);
    if (process <= 0) continue;
    if (!backend.wait_event_type.empty() || backend.hidden || backend.kernel_state != 0) {
      states_.seen(process, backend.backend_start.count());
      continue;
    }
    backend.kernel_state = states_.state(process, backend.backend_start.count()).value_or(0);
  }
}

void add_kernel_times(const std::vector<KernelReading>& readings,
                      const std::map<KernelReadingId, Schedstat>& previous,
                      int64_t previous_epoch_us, const std::set<int32_t>& own,
                      model::KernelTimes& times) {
  for (const auto& reading : readings) {
    const auto before = previous.find({reading.pid, reading.backend_start});
    if (before == previous.end() && reading.backend_start <= previous_epoch_us) continue;
    const Schedstat from = before == previous.end() ? Schedstat{} : before->second;
    const model::KernelTime time{seconds_between(from.on_cpu_ns, reading.stat.on_cpu_ns),
                                 seconds_between(from.runqueue_ns, reading.stat.runqueue_ns)};
    const bool ours = reading.backend_start < 0 || own.contains(reading.pid);
    const char* group = ours                                       ? model::kSamplerBackend
                        : reading.backend_type == "client backend" ? model::kClientBackends
                                                                   : model::kBackgroundProcesses;
    times.by_group[group].add(time);
    if (!ours && !reading.backend_type.empty())
      times.by_backend_type[reading.backend_type].add(time);
  }
}

namespace {
std::mutex own_sessions_mutex;
std::set<const PgSession*> own_sessions;
}  // namespace

OwnSession::OwnSession(const PgSession& session) : session_(&session) {
  const std::lock_guard lock(own_sessions_mutex);
  own_sessions.insert(session_);
}

OwnSession::~OwnSession() {
  const std::lock_guard lock(own_sessions_mutex);
  own_sessions.erase(session_);
}

std::set<int32_t> OwnSession::backends_on(const std::string& host, const std::string& port) {
  std::set<int32_t> pids;
  const std::lock_guard lock(own_sessions_mutex);
  for (const PgSession* session : own_sessions) {
    if (session->connected() && session->host() == host && session->port() == port) {
      pids.insert(session->backend_pid());
    }
  }
  return pids;
}

void KernelStage::read_times(const model::Snapshot& snapshot, model::SteadyClock::time_point now,
                             model::SampleSink& sink) {
  KernelRound round(now);
  model::KernelTimes times;
  times.from = last_reading_.value_or(round.taken_at());
  times.to = round.taken_at();
  std::vector<KernelReading> readings;
  readings.reserve(snapshot.backends.size() + 1);
  auto read = [&](int32_t pid, int64_t backend_start, const std::string& backend_type) {
    const pid_t process = processes_.host_pid(pid);
    if (const auto stat = process > 0 ? round.schedstat(process, read_schedstat) : std::nullopt) {
      readings.push_back({pid, backend_start, backend_type, *stat});
    }
  };
  for (const auto& backend : snapshot.backends) {
    read(backend.pid, backend.backend_start.count(), backend.backend_type);
  }
  read(sampler_pid_, -1, "");
  std::map<KernelReadingId, Schedstat> current;
  for (const auto& reading : readings) current[{reading.pid, reading.backend_start}] = reading.stat;
  if (last_reading_) {
    add_kernel_times(readings, previous_, last_reading_epoch_us_,
                     OwnSession::backends_on(host_, port_), times);
  }
  // Backends that exited since the last reading: their time after it, and the whole lives of
  // those that came and went between the readings (pgbench -C), from the postmaster's reaped
  // children. Background processes' exits count too (an autovacuum worker): no group is known.
  base::Seconds counted_before{0};
  for (const auto& [id, stat] : previous_) {
    if (!current.contains(id))
      counted_before += base::Seconds(static_cast<double>(stat.on_cpu_ns) / 1e9);
  }
  if (const auto reaped = round.reaped_children_cpu(postmaster_, read_reaped_children_cpu)) {
    const auto exited = exited_.next(*reaped, counted_before);
    // The kernel keeps no run-queue time of a reaped process: it is taken in the proportion of
    // the live client backends' of the same interval (on a loaded host a short-lived backend
    // of pgbench -C spends most of its life queued, and a sampler sees it runnable).
    const auto live = times.by_group.find(model::kClientBackends);
    const double queued_per_cpu =
        live != times.by_group.end() && live->second.on_cpu > base::Seconds(0)
            ? live->second.runqueue / live->second.on_cpu
            : 0.0;
    if (last_reading_) {
      times.by_group[model::kExitedProcesses] = {exited, exited * queued_per_cpu};
    }
  }
  previous_ = std::move(current);
  if (last_reading_) sink.on_kernel_times(times);
  last_reading_ = round.taken_at();
  last_reading_epoch_us_ = round.taken_at_epoch_us();
  last_round_ = round.number();
}

asio::awaitable<CollectResult> KernelStage::collect(CollectContext& context) {
  if (!local_ || context.snapshot == nullptr) co_return std::nullopt;
  read_states(*context.snapshot);
  // Once a round (a whole second of the steady clock), with the round's readings, which every
  // target on the server shares. Timed as the schedstat files are read, after the states
  // (hundreds of /proc reads with the activity source): a reading's interval is the one its
  // figures cover.
  const auto now = model::SteadyClock::now();
  if (!last_round_ || KernelRound::number(now) > *last_round_) {
    read_times(*context.snapshot, now, *context.sink);
  }
  co_return std::nullopt;
}

asio::awaitable<CollectResult> LoadgenKernelCollector::collect(CollectContext& context) {
  const auto stat = read_process_schedstat(pid_);
  // The load generator may have exited at the very end of the run: its last interval is lost.
  if (!stat) co_return std::nullopt;
  if (previous_) {
    model::KernelTimes times;
    times.from = previous_at_;
    times.to = context.now;
    times.by_group[model::kLoadGenerator] = {
        seconds_between(previous_->on_cpu_ns, stat->on_cpu_ns),
        seconds_between(previous_->runqueue_ns, stat->runqueue_ns)};
    context.sink->on_kernel_times(times);
  }
  previous_ = stat;
  previous_at_ = context.now;
  co_return std::nullopt;
}

}  // namespace pgwaitprof::collectors
