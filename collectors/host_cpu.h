// Host CPU during a run (a run collector, once per timeline interval): /proc/stat's split of the
// machine's time and the CPU the load generator's process used, in cores.
#pragma once

#include <sys/types.h>

#include <optional>

#include "base/time.h"
#include "collectors/collector.h"
#include "collectors/host.h"

namespace pgwaitprof::collectors {

class HostCpuCollector : public Collector {
 public:
  explicit HostCpuCollector(pid_t loadgen_pid, base::Seconds interval);
  std::string_view name() const override { return "host_cpu"; }
  asio::awaitable<CollectResult> collect(CollectContext& context) override;

 private:
  pid_t loadgen_pid_;
  base::Seconds interval_;
  std::optional<CpuTimes> host_before_;
  uint64_t loadgen_before_ = 0;
};

}  // namespace pgwaitprof::collectors
