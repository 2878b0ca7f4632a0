// On-CPU sampling with perf_event_open: the kernel's software clock (PERF_COUNT_SW_CPU_CLOCK),
// one system-wide event per online CPU, each with a ring buffer the kernel writes samples into
// (instruction pointer, pid/tid, CLOCK_MONOTONIC time and the call chain, kernel and user
// frames). The buffers are only read, but for data_tail, which tells the kernel how far
// (the ABI's one write). Every record is checked against the buffer's bounds before it is read.
// Parsing a record is split from the I/O, for tests on bytes.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.h"
#include "config/numbers.h"

namespace pgwaitprof::collectors::cpu {

struct PerfSample {
  pid_t pid = 0;
  pid_t tid = 0;
  uint64_t time_ns = 0;  // CLOCK_MONOTONIC, as std::chrono::steady_clock
  // Leaf first, as the kernel writes it; each address with whether it is a kernel one (the
  // chain's context markers are dropped).
  std::vector<std::pair<uint64_t, bool>> frames;
};

// The body of a PERF_RECORD_SAMPLE of PERF_SAMPLE_IP|TID|TIME|CALLCHAIN (after its header);
// nullopt when it is shorter than it says. Without a call chain the sample's ip is its frame.
std::optional<PerfSample> parse_sample(std::span<const uint8_t> body, bool ip_is_kernel);
// "0-3,5,7-8" (/sys/devices/system/cpu/online) as CPU numbers; empty when malformed.
std::vector<int> parse_cpu_list(std::string_view text);
// kernel.perf_event_paranoid, or nullopt when it cannot be read.
std::optional<int> read_perf_event_paranoid();

// The events of every online CPU, enabled from open() until destroyed.
class PerfEvents {
 public:
  // `hz` samples per second per CPU (config::kMinCpuProfileHz..kMaxCpuProfileHz). The error is one
  // line: which call failed and, for a refusal, the paranoid level and what to do.
  static base::Expected<std::unique_ptr<PerfEvents>> open(int hz);
  ~PerfEvents();
  PerfEvents(const PerfEvents&) = delete;
  PerfEvents& operator=(const PerfEvents&) = delete;

  // Every sample written since the previous drain, CPU by CPU; returns the number of samples
  // the kernel reported lost (a full buffer).
  uint64_t drain(const std::function<void(const PerfSample&)>& on_sample);
  int cpus() const { return static_cast<int>(buffers_.size()); }

 private:
  struct Buffer;
  PerfEvents() = default;
  uint64_t drain_buffer(Buffer& buffer, const std::function<void(const PerfSample&)>& on_sample);
  std::vector<std::unique_ptr<Buffer>> buffers_;
  std::vector<uint8_t> record_;  // a record that wraps around a buffer's end, copied
};

}  // namespace pgwaitprof::collectors::cpu
