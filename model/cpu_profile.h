// Where the server's processes spent their time on a CPU (--cpu-profile): on-CPU samples of the
// kernel's software clock, their call chains resolved to function names, aggregated per group
// (the client backends, and each background backend type) into folded stacks (flamegraph.pl's
// format) and self counts per function, and per timeline interval the client backends' top
// functions so that a stall can show its own. Pure: the collector (collectors/cpu/) delivers
// resolved samples, the run recorder adds them here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/time.h"
#include "model/sample.h"

namespace pgwaitprof::model {

// The group of client backends; other groups are named by their backend type ("walwriter").
inline constexpr std::string_view kCpuClientBackends = "client backend";
// A kernel frame's name ends in this (as in perf's folded output): "finish_task_switch_[k]".
inline constexpr std::string_view kKernelFrameSuffix = "_[k]";

// One sample as the collector delivers it.
struct CpuSample {
  std::string backend_type;  // "client backend", "walwriter", ...
  SteadyClock::time_point at{};
  std::vector<std::string> frames;  // root first, the leaf (the running function) last
};

// What the collector delivers after each drain of its buffers.
struct CpuSampleBatch {
  int hz = 0;         // the sampling rate per CPU
  int cpus = 0;       // CPUs sampled
  uint64_t lost = 0;  // samples the kernel dropped since the previous batch (buffers full)
  std::vector<CpuSample> samples;
  // Why some frames could not be named as they should ("[kernel]" under kernel.kptr_restrict,
  // a deleted binary), each once for the collector's life: the run's warnings.
  std::vector<std::string> notes;
};

struct CpuFunction {
  std::string name;  // without the kernel suffix
  bool kernel = false;
  uint64_t samples = 0;  // self: the function was the leaf
  friend bool operator==(const CpuFunction&, const CpuFunction&) = default;
};

struct CpuGroup {
  uint64_t samples = 0;
  std::map<std::string, uint64_t> folded;  // "main;PostgresMain;exec_simple_query" -> samples
  std::vector<CpuFunction> self;           // by samples, largest first
  friend bool operator==(const CpuGroup&, const CpuGroup&) = default;
};

// The client backends in one timeline interval.
struct CpuInterval {
  uint64_t client_samples = 0;
  // Its own top kCpuIntervalTop, and every one of the run's top kCpuRunTracked functions that
  // ran in it (a whole series of those for batch means); largest first.
  std::vector<CpuFunction> top;
  friend bool operator==(const CpuInterval&, const CpuInterval&) = default;
};

inline constexpr size_t kCpuIntervalTop = 10;
inline constexpr size_t kCpuRunTracked = 30;
// Distinct stacks kept per group; the rest count under "[other stacks]" (bounded memory).
inline constexpr size_t kMaxCpuStacks = 50000;

struct CpuProfile {
  int hz = 0;
  int cpus = 0;
  base::Seconds duration{0};  // the time sampled
  uint64_t samples = 0;       // of the server's processes, every group
  uint64_t lost = 0;
  std::map<std::string, CpuGroup> groups;   // by group name
  std::map<size_t, CpuInterval> intervals;  // by timeline interval index
  friend bool operator==(const CpuProfile&, const CpuProfile&) = default;
};

bool is_kernel_frame(std::string_view frame);
// The frame's function name and whether it is the kernel's.
CpuFunction frame_function(std::string_view frame);
// The frame a function was sampled as (the inverse of frame_function): "name_[k]" for the
// kernel's.
std::string function_frame(const CpuFunction& function);
// One name per function for comparisons across runs: "finish_task_switch [kernel]".
std::string function_label(const CpuFunction& function);
// Frames joined with ';' (a ';' inside a name becomes ':', as flamegraph.pl expects).
std::string fold_frames(const std::vector<std::string>& frames);
// One "stack count" line per stack (flamegraph.pl's input), largest first.
std::string folded_text(const CpuGroup& group);
// On-CPU average active sessions that `samples` stand for: samples / (hz * seconds).
double cpu_aas(uint64_t samples, const CpuProfile& profile);

// Adds batches as they come; profile() is the aggregate so far (self lists sorted).
class CpuProfileBuilder {
 public:
  // `interval` is the timeline interval index of each sample (the recorder's slice_index).
  template <typename IntervalOf>
  void add(const CpuSampleBatch& batch, IntervalOf interval) {
    begin_batch(batch);
    for (const auto& sample : batch.samples) add_sample(sample, interval(sample.at));
  }
  void add_sample(const CpuSample& sample, size_t interval);
  CpuProfile profile(base::Seconds duration) const;

 private:
  void begin_batch(const CpuSampleBatch& batch);
  struct Group {
    uint64_t samples = 0;
    std::map<std::string, uint64_t> folded;
    std::map<std::string, uint64_t> self;  // by frame (kernel suffix kept)
  };
  int hz_ = 0;
  int cpus_ = 0;
  uint64_t samples_ = 0;
  uint64_t lost_ = 0;
  std::map<std::string, Group> groups_;
  std::map<size_t, Group> intervals_;  // client backends; folded unused
};

// Self counts by frame as functions, largest first (ties by name), at most `limit`.
std::vector<CpuFunction> top_functions(const std::map<std::string, uint64_t>& self, size_t limit);

void to_json(nlohmann::json& j, const CpuProfile& profile);
void from_json(const nlohmann::json& j, CpuProfile& profile);

}  // namespace pgwaitprof::model
