// Host CPU per interval.
#include "collectors/host_cpu.h"

#include <unistd.h>

namespace pgwaitprof::collectors {

HostCpuCollector::HostCpuCollector(pid_t loadgen_pid, base::Seconds interval)
    : loadgen_pid_(loadgen_pid),
      interval_(interval),
      host_before_(read_proc_stat()),
      loadgen_before_(read_process_cpu_ticks(loadgen_pid).value_or(0)) {}

asio::awaitable<CollectResult> HostCpuCollector::collect(CollectContext& context) {
  const auto host_after = read_proc_stat();
  const auto loadgen_after = read_process_cpu_ticks(loadgen_pid_);
  if (!host_after) co_return CollectorError{"could not read /proc/stat", "", false};
  // The load generator may have exited at the very end of the run: its last interval is lost.
  if (host_before_ && loadgen_after) {
    context.sink->on_host_cpu(
        context.now, cpu_between(*host_before_, *host_after, *loadgen_after - loadgen_before_,
                                 interval_, ::sysconf(_SC_CLK_TCK)));
    loadgen_before_ = *loadgen_after;
  }
  host_before_ = host_after;
  co_return std::nullopt;
}

}  // namespace pgwaitprof::collectors
