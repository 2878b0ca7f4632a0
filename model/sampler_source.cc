// Sampling source names.
#include "model/sampler_source.h"

namespace pgwaitprof::model {

std::string_view to_string(SamplerSource source) {
  switch (source) {
    case SamplerSource::kActivity:
      return "activity";
    case SamplerSource::kPgWaitSampling:
      return "pg_wait_sampling";
    case SamplerSource::kMemory:
      return "memory";
    case SamplerSource::kTrace:
      return "trace";
    case SamplerSource::kAuto:
      return "auto";
  }
  return "activity";
}

std::optional<SamplerSource> parse_sampler_source(std::string_view name) {
  for (const auto source :
       {SamplerSource::kAuto, SamplerSource::kActivity, SamplerSource::kPgWaitSampling,
        SamplerSource::kMemory, SamplerSource::kTrace}) {
    if (to_string(source) == name) return source;
  }
  return std::nullopt;
}

const std::vector<std::string>& sampler_source_names() {
  static const std::vector<std::string> names = {
      std::string(to_string(SamplerSource::kAuto)),
      std::string(to_string(SamplerSource::kActivity)),
      std::string(to_string(SamplerSource::kPgWaitSampling)),
      std::string(to_string(SamplerSource::kMemory)),
      std::string(to_string(SamplerSource::kTrace))};
  return names;
}

bool takes_snapshots(SamplerSource source) {
  return source != SamplerSource::kPgWaitSampling && source != SamplerSource::kTrace;
}

std::string_view sampler_source_limits(SamplerSource source) {
  if (source == SamplerSource::kPgWaitSampling) {
    return "pg_wait_sampling samples at its own profile_period, whatever --hz says, and records "
           "no CPU samples, no session state (idle and active ClientRead are one), no query text "
           "and no wait lengths";
  }
  if (source == SamplerSource::kTrace) {
    return "trace reads a server on this host only; its on-CPU time by wait event is sampled in "
           "the kernel, its blocked and run-queue time and wait counts are exact; it shows no "
           "application_name or background workers' own type names, query ids from 14 on, and "
           "without pg_stat_statements the texts of the statements running at its reads (once "
           "a second) only";
  }
  if (source == SamplerSource::kMemory) {
    return "memory reads a server on this host only, and shows no application_name and LWLocks "
           "of extensions as \"extension\"";
  }
  return "";
}

void TraceWitness::add(const TraceWitness& other) {
  on_cpu_s += other.on_cpu_s;
  runqueue_s += other.runqueue_s;
  kernel_on_cpu_s += other.kernel_on_cpu_s;
  kernel_runqueue_s += other.kernel_runqueue_s;
}

}  // namespace pgwaitprof::model
