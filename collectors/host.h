// The host side of a run: CPU use from /proc/stat, the load generator's CPU from
// /proc/<pid>/stat, and the machine's description (kernel, CPU model and count, memory).
// Parsing is split from reading so it can be tested on strings.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/time.h"
#include "model/run.h"

namespace pgwaitprof::collectors {

struct CpuTimes {
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  uint64_t total() const { return user + nice + system + idle + iowait + irq + softirq + steal; }
};

// The aggregate "cpu" line of /proc/stat.
std::optional<CpuTimes> parse_proc_stat(std::string_view text);
// utime + stime (clock ticks) of /proc/<pid>/stat, which covers all of the process's threads.
std::optional<uint64_t> parse_process_cpu_ticks(std::string_view text);
// Percentages of the interval between two readings; loadgen_cores from its tick delta.
model::HostCpu cpu_between(const CpuTimes& before, const CpuTimes& after, uint64_t loadgen_ticks,
                           base::Seconds interval, long ticks_per_second);

std::optional<CpuTimes> read_proc_stat();
std::optional<uint64_t> read_process_cpu_ticks(pid_t pid);

// Kernel, CPU model and count, memory, hostname and pgwaitprof's own version into
// `environment`.
void describe_host(model::Environment& environment);
std::string parse_cpu_model(std::string_view cpuinfo);
uint64_t parse_mem_total_bytes(std::string_view meminfo);

}  // namespace pgwaitprof::collectors
