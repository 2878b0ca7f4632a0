// perf_event_open, its ring buffers, and the records in them.
#include "collectors/cpu/perf_events.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

namespace pgwaitprof::collectors::cpu {
namespace {

// 64 pages of samples per CPU: at 999 Hz with 64-frame chains, over a second between drains.
constexpr size_t kDataPages = 64;
// Frames kept of a call chain (the kernel's limit is kernel.perf_event_max_stack, 127).
constexpr uint16_t kMaxStack = 64;

std::string read_text(const char* path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

template <typename T>
bool take(std::span<const uint8_t>& bytes, T& value) {
  if (bytes.size() < sizeof(T)) return false;
  std::memcpy(&value, bytes.data(), sizeof(T));
  bytes = bytes.subspan(sizeof(T));
  return true;
}

std::string refusal(int error) {
  const auto paranoid = read_perf_event_paranoid();
  return fmt::format(
      "could not open the CPU profile's perf events: {}; kernel.perf_event_paranoid is {}, and "
      "sampling every process needs it at 0 or less (sysctl kernel.perf_event_paranoid=0) or "
      "pgwaitprof run as root or with CAP_PERFMON",
      std::strerror(error), paranoid ? std::to_string(*paranoid) : "unknown");
}

}  // namespace

struct PerfEvents::Buffer {
  int fd = -1;
  void* base = MAP_FAILED;
  size_t length = 0;
  ~Buffer() {
    if (base != MAP_FAILED) ::munmap(base, length);
    if (fd >= 0) ::close(fd);
  }
  perf_event_mmap_page* page() const { return static_cast<perf_event_mmap_page*>(base); }
};

std::optional<PerfSample> parse_sample(std::span<const uint8_t> body, bool ip_is_kernel) {
  PerfSample sample;
  uint64_t ip = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t count = 0;
  if (!take(body, ip) || !take(body, pid) || !take(body, tid) || !take(body, sample.time_ns) ||
      !take(body, count) || count > body.size() / sizeof(uint64_t)) {
    return std::nullopt;
  }
  sample.pid = static_cast<pid_t>(pid);
  sample.tid = static_cast<pid_t>(tid);
  bool kernel = ip_is_kernel;
  for (uint64_t index = 0; index < count; ++index) {
    uint64_t address = 0;
    take(body, address);
    if (address >= static_cast<uint64_t>(PERF_CONTEXT_MAX)) {  // a context marker
      kernel = address == static_cast<uint64_t>(PERF_CONTEXT_KERNEL);
      continue;
    }
    if (sample.frames.size() < kMaxStack) sample.frames.emplace_back(address, kernel);
  }
  if (sample.frames.empty()) sample.frames.emplace_back(ip, ip_is_kernel);
  return sample;
}

std::vector<int> parse_cpu_list(std::string_view text) {
  std::vector<int> cpus;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  while (!text.empty()) {
    const auto comma = text.find(',');
    const auto item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    int first = 0;
    int last = 0;
    const auto dash = item.find('-');
    const auto head = item.substr(0, dash);
    if (std::from_chars(head.data(), head.data() + head.size(), first).ec != std::errc()) return {};
    last = first;
    if (dash != std::string_view::npos) {
      const auto tail = item.substr(dash + 1);
      if (std::from_chars(tail.data(), tail.data() + tail.size(), last).ec != std::errc())
        return {};
    }
    if (first < 0 || last < first || last > 65535) return {};
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  }
  return cpus;
}

std::optional<int> read_perf_event_paranoid() {
  const auto text = read_text("/proc/sys/kernel/perf_event_paranoid");
  int value = 0;
  const char* begin = text.data();
  if (!text.empty() && *begin == '-') ++begin;
  if (std::from_chars(begin, text.data() + text.size(), value).ec != std::errc())
    return std::nullopt;
  return text.front() == '-' ? -value : value;
}

base::Expected<std::unique_ptr<PerfEvents>> PerfEvents::open(int hz) {
  if (hz < config::kMinCpuProfileHz || hz > config::kMaxCpuProfileHz) {
    return base::Error{fmt::format("invalid CPU profile rate {} Hz: it must be {} to {}", hz,
                                   config::kMinCpuProfileHz, config::kMaxCpuProfileHz)};
  }
  const auto cpus = parse_cpu_list(read_text("/sys/devices/system/cpu/online"));
  if (cpus.empty()) return base::Error{"could not read the online CPUs from /sys"};
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.freq = 1;
  attr.sample_freq = static_cast<uint64_t>(hz);
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
  attr.sample_max_stack = kMaxStack;
  attr.exclude_hv = 1;
  attr.use_clockid = 1;
  attr.clockid = CLOCK_MONOTONIC;  // std::chrono::steady_clock's
  attr.disabled = 1;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::unique_ptr<PerfEvents> events(new PerfEvents());
  for (const int cpu : cpus) {
    auto buffer = std::make_unique<Buffer>();
    buffer->fd =
        static_cast<int>(::syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
    if (buffer->fd < 0) {
      const int error = errno;
      if (error == EACCES || error == EPERM) return base::Error{refusal(error)};
      return base::Error{fmt::format("could not open the CPU profile's perf event on CPU {}: {}",
                                     cpu, std::strerror(error))};
    }
    buffer->length = (kDataPages + 1) * page;
    buffer->base =
        ::mmap(nullptr, buffer->length, PROT_READ | PROT_WRITE, MAP_SHARED, buffer->fd, 0);
    if (buffer->base == MAP_FAILED) {
      return base::Error{fmt::format("could not map the CPU profile's buffer of CPU {}: {}", cpu,
                                     std::strerror(errno))};
    }
    events->buffers_.push_back(std::move(buffer));
  }
  for (const auto& buffer : events->buffers_) ::ioctl(buffer->fd, PERF_EVENT_IOC_ENABLE, 0);
  return events;
}

PerfEvents::~PerfEvents() {
  for (const auto& buffer : buffers_) ::ioctl(buffer->fd, PERF_EVENT_IOC_DISABLE, 0);
}

uint64_t PerfEvents::drain(const std::function<void(const PerfSample&)>& on_sample) {
  uint64_t lost = 0;
  for (auto& buffer : buffers_) lost += drain_buffer(*buffer, on_sample);
  return lost;
}

uint64_t PerfEvents::drain_buffer(Buffer& buffer,
                                  const std::function<void(const PerfSample&)>& on_sample) {
  auto* page = buffer.page();
  const uint64_t page_size = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t offset = page->data_offset != 0 ? page->data_offset : page_size;
  const uint64_t size = page->data_size != 0 ? page->data_size : buffer.length - page_size;
  if (offset + size > buffer.length || size == 0) return 0;
  const auto* data = static_cast<const uint8_t*>(buffer.base) + offset;
  const uint64_t head = __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = page->data_tail;
  // More than a buffer's worth would be a kernel we do not understand: drop it all.
  if (head - tail > size) tail = head;
  uint64_t lost = 0;
  while (head - tail >= sizeof(perf_event_header)) {
    perf_event_header header;
    record_.resize(sizeof header);
    for (size_t byte = 0; byte < sizeof header; ++byte) record_[byte] = data[(tail + byte) % size];
    std::memcpy(&header, record_.data(), sizeof header);
    if (header.size < sizeof header || header.size > head - tail) {
      tail = head;  // a malformed record: what follows it cannot be found
      break;
    }
    record_.resize(header.size);
    const uint64_t start = tail % size;
    const uint64_t first = std::min<uint64_t>(header.size, size - start);
    std::memcpy(record_.data(), data + start, first);
    std::memcpy(record_.data() + first, data, header.size - first);
    const std::span<const uint8_t> body(record_.data() + sizeof header,
                                        header.size - sizeof header);
    if (header.type == PERF_RECORD_SAMPLE) {
      const bool kernel = (header.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
      if (auto sample = parse_sample(body, kernel)) on_sample(*sample);
    } else if (header.type == PERF_RECORD_LOST && body.size() >= 2 * sizeof(uint64_t)) {
      uint64_t count = 0;
      std::memcpy(&count, body.data() + sizeof(uint64_t), sizeof count);
      lost += count;
    }
    tail += header.size;
  }
  __atomic_store_n(&page->data_tail, tail, __ATOMIC_RELEASE);
  return lost;
}

}  // namespace pgwaitprof::collectors::cpu
