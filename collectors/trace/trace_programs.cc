// Loading, attaching and reading the BPF programs. libbpf's messages are collected while the
// programs load so that a verifier rejection can say why in one line.
#include "collectors/trace/trace_programs.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <fmt/format.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdarg>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "base/fault_injection.h"
#include "collectors/cpu/perf_events.h"
#include "collectors/kernel.h"
#include "waits.skel.h"  // generated into build/collectors/trace/ (collectors/CMakeLists.txt)

namespace pgwaitprof::collectors::trace {
namespace {

constexpr int kMaxSampleHz = 10000;

// libbpf's messages of the load in progress (one load at a time: the mutex).
std::mutex log_mutex;
std::string* log_into = nullptr;

// Whole messages: libbpf prints a rejected program's verifier log in one message, and its end
// says why (a fixed buffer of 1,024 bytes kept the start and lost the reason).
int collect_log(enum libbpf_print_level level, const char* format, va_list args) {
  if (log_into == nullptr || level == LIBBPF_DEBUG) return 0;
  va_list measure;
  va_copy(measure, args);
  const int length = std::vsnprintf(nullptr, 0, format, measure);
  va_end(measure);
  if (length <= 0) return 0;
  const size_t at = log_into->size();
  log_into->resize(at + static_cast<size_t>(length) + 1);
  std::vsnprintf(log_into->data() + at, static_cast<size_t>(length) + 1, format, args);
  log_into->resize(at + static_cast<size_t>(length));
  return 0;
}

// The last `count` non-empty lines of `text`, joined with " / ".
std::string last_lines(std::string_view text, size_t count) {
  std::vector<std::string> lines;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t") != std::string::npos) lines.push_back(line);
  }
  std::string joined;
  const size_t from = lines.size() > count ? lines.size() - count : 0;
  for (size_t index = from; index < lines.size(); ++index) {
    if (!joined.empty()) joined += " / ";
    joined += lines[index];
  }
  return joined;
}

base::Error refused(std::string_view what) {
  return base::Error{fmt::format("{}{}", kTraceRefused, what)};
}

// Why a load failed. Where the verifier ran, its own words: it refuses a program with EACCES or
// EINVAL, which is no want of privilege (check_kernel() has loaded a program by then).
base::Error load_error(int error, const std::string& log) {
  if (const auto rejected = verifier_rejection(log)) {
    return refused(fmt::format("the kernel's verifier rejected the BPF program \"{}\" ({}): {}",
                               rejected->program, std::strerror(error), rejected->tail));
  }
  if (error == EPERM || error == EACCES) {
    return refused(fmt::format(
        "the kernel does not let this process load BPF programs ({}): run as root or with "
        "CAP_BPF and CAP_PERFMON, and check kernel.unprivileged_bpf_disabled and lockdown",
        std::strerror(error)));
  }
  const auto tail = last_lines(log, 3);
  return refused(fmt::format("the kernel rejected the BPF programs ({}){}", std::strerror(error),
                             tail.empty() ? "" : ": " + tail));
}

int open_clock(int cpu, int hz) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.freq = 1;
  attr.sample_freq = static_cast<uint64_t>(hz);
  return static_cast<int>(::syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

std::vector<int> online_cpus() {
  std::ifstream in("/sys/devices/system/cpu/online");
  std::string text;
  std::getline(in, text);
  return cpu::parse_cpu_list(text);
}

// Whether a switch-in can read the clock its run queue stamped its enqueue with
// (waits.bpf.c's runq_since_out): sched_info's stamp, and the path from a task to its queue's
// clock through its CFS run queue (CONFIG_FAIR_GROUP_SCHED). Without it, on_wakeup ends the
// blocked intervals.
bool kernel_has_run_queue_clock() {
  ::btf* kernel = btf__load_vmlinux_btf();
  if (kernel == nullptr) return false;
  const auto has = [kernel](const char* type, const char* member) {
    const int id = btf__find_by_name_kind(kernel, type, BTF_KIND_STRUCT);
    if (id < 0) return false;
    const ::btf_type* found = btf__type_by_id(kernel, static_cast<__u32>(id));
    const ::btf_member* members = btf_members(found);
    for (int index = 0; index < btf_vlen(found); ++index) {
      if (std::strcmp(btf__name_by_offset(kernel, members[index].name_off), member) == 0) {
        return true;
      }
    }
    return false;
  };
  const bool reachable = has("sched_info", "last_queued") && has("sched_entity", "cfs_rq") &&
                         has("cfs_rq", "rq") && has("rq", "clock");
  btf__free(kernel);
  return reachable;
}

// PGWAITPROF_FAULT_FAIL=trace-runq-clock (the fault tests): as on a kernel without it.
// The running kernel's answer, looked up once a process (its BTF, a few MB, is parsed each
// time): a daemon opens the programs once per traced target and again at each restart.
bool has_run_queue_clock() {
  if (base::fault_fails("trace-runq-clock")) return false;
  static const bool reachable = kernel_has_run_queue_clock();
  return reachable;
}

}  // namespace

std::optional<VerifierRejection> verifier_rejection(std::string_view messages, size_t count) {
  static constexpr std::string_view kBegin = "-- BEGIN PROG LOAD LOG --";
  static constexpr std::string_view kEnd = "-- END PROG LOAD LOG --";
  static constexpr std::string_view kProgram = "prog '";
  const size_t begin = messages.rfind(kBegin);
  if (begin == std::string_view::npos) return std::nullopt;
  VerifierRejection rejection;
  // "libbpf: prog 'NAME': -- BEGIN PROG LOAD LOG --" on the marker's line.
  const size_t line = messages.rfind('\n', begin);
  const size_t name = messages.find(kProgram, line == std::string_view::npos ? 0 : line);
  if (name != std::string_view::npos && name < begin) {
    const size_t from = name + kProgram.size();
    rejection.program = std::string(messages.substr(from, messages.find('\'', from) - from));
  }
  const size_t from = begin + kBegin.size();
  const size_t end = messages.find(kEnd, from);
  rejection.tail = last_lines(
      messages.substr(from, end == std::string_view::npos ? std::string_view::npos : end - from),
      count);
  if (rejection.tail.empty()) return std::nullopt;
  return rejection;
}

std::vector<pid_t> process_tree(pid_t root) {
  std::multimap<pid_t, pid_t> children;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const auto name = entry.path().filename().string();
    pid_t pid = 0;
    if (std::from_chars(name.data(), name.data() + name.size(), pid).ec != std::errc()) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    if (const auto parent = parse_parent_pid(stat)) children.emplace(*parent, pid);
  }
  std::vector<pid_t> tree{root};
  for (size_t index = 0; index < tree.size() && tree.size() < TRACE_MAX_TRACKED; ++index) {
    const auto [first, last] = children.equal_range(tree[index]);
    for (auto it = first; it != last; ++it) tree.push_back(it->second);
  }
  return tree;
}

base::Status TracePrograms::check_kernel() {
  // PGWAITPROF_FAULT_FAIL=trace-btf (the fault tests): as on a kernel built without BTF.
  if (base::fault_fails("trace-btf") || !std::filesystem::exists("/sys/kernel/btf/vmlinux")) {
    return refused(
        "the kernel has no BTF (/sys/kernel/btf/vmlinux is missing: CONFIG_DEBUG_INFO_BTF)");
  }
  // A tracing program needs CAP_BPF and CAP_PERFMON (or root); the probe loads a minimal one.
  std::lock_guard lock(log_mutex);
  const auto previous = libbpf_set_print(nullptr);
  const int probed = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_KPROBE, nullptr);
  libbpf_set_print(previous);
  if (probed <= 0) return load_error(probed < 0 ? -probed : EPERM, "");
  return std::nullopt;
}

base::Status TracePrograms::load(const TraceConfig& config, std::string& log) {
  std::lock_guard lock(log_mutex);
  log_into = &log;
  const auto previous = libbpf_set_print(collect_log);
  skeleton_ = waits__open();
  int error = skeleton_ == nullptr ? errno : 0;
  if (error == 0) {
    auto* rodata = skeleton_->rodata;
    rodata->wait_pointer = config.wait_pointer;
    rodata->wait_offset = config.wait_offset;
    rodata->backend_type_at = config.backend_type_at;
    rodata->status_pointer = config.status_pointer;
    rodata->state_offset = config.state_offset;
    rodata->query_offset = config.query_offset;
    wakeups_traced_ = !has_run_queue_clock();
    rodata->wakeups_traced = wakeups_traced_ ? 1 : 0;
    bpf_program__set_autoload(skeleton_->progs.on_wakeup, wakeups_traced_);
    // PGWAITPROF_FAULT_FAIL=trace-verifier (the fault tests): the switch program attached to
    // sched_wakeup, whose one argument leaves the switch's others out of the context, as on a
    // kernel whose sched_switch has no prev_state (before 5.18): the verifier refuses it.
    if (base::fault_fails("trace-verifier")) {
      error = -bpf_program__set_attach_target(skeleton_->progs.on_switch, 0, "sched_wakeup");
    }
    if (error == 0) error = -waits__load(skeleton_);
  }
  libbpf_set_print(previous);
  log_into = nullptr;
  if (error != 0) return load_error(error, log);
  return std::nullopt;
}

base::Status TracePrograms::open_exits_ring() {
  exits_ = ring_buffer__new(
      bpf_map__fd(skeleton_->maps.exits),
      [](void* context, void* data, size_t size) {
        auto* into = static_cast<TracePrograms*>(context)->exits_into_;
        if (into != nullptr && size >= sizeof(trace_progress)) {
          into->push_back(*static_cast<const trace_progress*>(data));
        }
        return 0;
      },
      this, nullptr);
  if (exits_ == nullptr) {
    return refused(
        fmt::format("could not open the ring of exited processes: {}", std::strerror(errno)));
  }
  return std::nullopt;
}

base::Status TracePrograms::attach_sampling(int sample_hz) {
  sample_hz_ = std::clamp(sample_hz, 1, kMaxSampleHz);
  for (const int cpu : online_cpus()) {
    const int fd = open_clock(cpu, sample_hz_);
    if (fd < 0) {
      return refused(fmt::format("could not open the sampling perf event on CPU {}: {}", cpu,
                                 std::strerror(errno)));
    }
    perf_fds_.push_back(fd);
    auto* link = bpf_program__attach_perf_event(skeleton_->progs.on_sample, fd);
    if (link == nullptr) {
      return refused(fmt::format("could not attach the sampling program on CPU {}: {}", cpu,
                                 std::strerror(errno)));
    }
    perf_links_.push_back(link);
    ++cpus_;
  }
  return std::nullopt;
}

base::Expected<std::unique_ptr<TracePrograms>> TracePrograms::open(const TraceConfig& config) {
  if (auto error = check_kernel()) return *error;
  std::unique_ptr<TracePrograms> programs(new TracePrograms());
  std::string log;
  if (auto failed = programs->load(config, log)) return *failed;
  if (const int error = -waits__attach(programs->skeleton_); error != 0) {
    return load_error(error, log);
  }
  if (auto failed = programs->open_exits_ring()) return *failed;
  if (auto failed = programs->attach_sampling(config.sample_hz)) return *failed;
  return programs;
}

TracePrograms::~TracePrograms() {
  if (exits_ != nullptr) ring_buffer__free(exits_);
  for (auto* link : perf_links_) bpf_link__destroy(link);
  for (const int fd : perf_fds_) ::close(fd);
  if (skeleton_ != nullptr) waits__destroy(skeleton_);
}

bool TracePrograms::track(pid_t pid) {
  // Task storage is keyed by a pidfd: the process itself, not a number that could be reused.
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return false;  // gone
  auto* count = &skeleton_->bss->tracked_count;
  if (__atomic_fetch_add(count, 1, __ATOMIC_RELAXED) >= TRACE_MAX_TRACKED) {
    __atomic_fetch_sub(count, 1, __ATOMIC_RELAXED);
    ::close(pidfd);
    return false;
  }
  const trace_task fresh{};
  const int error = bpf_map__update_elem(skeleton_->maps.tasks, &pidfd, sizeof pidfd, &fresh,
                                         sizeof fresh, BPF_NOEXIST);
  ::close(pidfd);
  // Already there: its fork was followed in the kernel, and counted there.
  if (error != 0) __atomic_fetch_sub(count, 1, __ATOMIC_RELAXED);
  return error == 0 || error == -EEXIST;
}

size_t TracePrograms::track_tree(pid_t root, const std::function<std::vector<pid_t>(pid_t)>& tree) {
  size_t added = track(root) ? 1 : 0;
  for (const pid_t pid : tree(root)) {
    if (pid != root) added += track(pid) ? 1 : 0;
  }
  return added;
}

double TracePrograms::switch_ns() const {
  bpf_prog_info info{};
  __u32 length = sizeof info;
  const int fd = bpf_program__fd(skeleton_->progs.on_switch);
  if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &length) != 0 || info.run_cnt == 0) return 0;
  return static_cast<double>(info.run_time_ns) / static_cast<double>(info.run_cnt);
}

bool TracePrograms::tracks(pid_t pid) const {
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return false;
  trace_task task{};
  const int error =
      bpf_map__lookup_elem(skeleton_->maps.tasks, &pidfd, sizeof pidfd, &task, sizeof task, 0);
  ::close(pidfd);
  return error == 0;
}

size_t TracePrograms::tracked() const {
  return static_cast<size_t>(__atomic_load_n(&skeleton_->bss->tracked_count, __ATOMIC_RELAXED));
}

base::Status TracePrograms::read(TraceTotals& into) const {
  const int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) return base::Error{"could not count the possible CPUs"};
  into.values.clear();
  into.counters.fill(0);
  std::vector<trace_value> per_cpu(static_cast<size_t>(cpus));
  // Each key's slot from the slots map, its values (each CPU's) from the totals array.
  const int slots = bpf_map__fd(skeleton_->maps.slots);
  const int totals = bpf_map__fd(skeleton_->maps.totals);
  trace_key key{};
  trace_key next{};
  const trace_key* previous = nullptr;
  while (bpf_map_get_next_key(slots, previous, &next) == 0) {
    key = next;
    previous = &key;
    __u32 slot = 0;
    if (bpf_map_lookup_elem(slots, &key, &slot) != 0 ||
        bpf_map_lookup_elem(totals, &slot, per_cpu.data()) != 0) {
      return base::Error{fmt::format("could not read the traced totals: {}", std::strerror(errno))};
    }
    auto& sum = into.values[key];
    for (const auto& value : per_cpu) {
      sum.blocked_ns += value.blocked_ns;
      sum.runq_ns += value.runq_ns;
      sum.oncpu_ns += value.oncpu_ns;
      sum.waits += value.waits;
      sum.samples += value.samples;
      if (value.min_ns != 0 && (sum.min_ns == 0 || value.min_ns < sum.min_ns))
        sum.min_ns = value.min_ns;
      sum.max_ns = std::max(sum.max_ns, value.max_ns);
      for (int bucket = 0; bucket < TRACE_HIST_BUCKETS; ++bucket)
        sum.hist[bucket] += value.hist[bucket];
    }
  }
  std::vector<__u64> counts(static_cast<size_t>(cpus));
  const int counters = bpf_map__fd(skeleton_->maps.counters);
  for (__u32 index = 0; index < kTraceCounters; ++index) {
    if (bpf_map_lookup_elem(counters, &index, counts.data()) != 0) {
      return base::Error{
          fmt::format("could not read the trace counters: {}", std::strerror(errno))};
    }
    for (const auto count : counts) into.counters[index] += count;
  }
  return std::nullopt;
}

base::Status TracePrograms::read_exits(std::vector<trace_progress>& into) {
  into.clear();
  exits_into_ = &into;
  // Bounded by the ring: what the programs wrote before this call, not waited for.
  const int consumed = ring_buffer__consume(exits_);
  exits_into_ = nullptr;
  if (consumed < 0) {
    return base::Error{
        fmt::format("could not read the exited processes: {}", std::strerror(-consumed))};
  }
  return std::nullopt;
}

base::Status TracePrograms::read_progress(std::vector<trace_progress>& into) const {
  into.clear();
  const int fd = bpf_iter_create(bpf_link__fd(skeleton_->links.dump_tasks));
  if (fd < 0) {
    return base::Error{
        fmt::format("could not read the traced processes: {}", std::strerror(errno))};
  }
  // Bounded: one record per tracked process, at most TRACE_MAX_TRACKED of them.
  trace_progress record{};
  size_t have = 0;
  int error = 0;
  for (;;) {
    const ssize_t got = ::read(fd, reinterpret_cast<char*>(&record) + have, sizeof record - have);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) error = errno;
    if (got <= 0) break;
    have += static_cast<size_t>(got);
    if (have < sizeof record) continue;
    if (into.size() < TRACE_MAX_TRACKED) into.push_back(record);
    have = 0;
  }
  ::close(fd);
  if (error != 0 || have != 0) {
    return base::Error{fmt::format("could not read the traced processes: {}",
                                   error != 0 ? std::strerror(error) : "a record was cut short")};
  }
  return std::nullopt;
}

}  // namespace pgwaitprof::collectors::trace
