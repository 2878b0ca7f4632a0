// A target's sampler options from its configuration.
#include "collectors/sampler_options.h"

namespace pgwaitprof::collectors {

SamplerOptions sampler_options(const config::TargetConfig& target) {
  SamplerOptions options;
  options.name = target.name;
  options.conninfo = target.dsn;
  options.hz = target.hz;
  options.trace_hz = target.trace_hz;
  options.auto_traces = target.auto_traces;
  options.source = target.source;
  options.wait_sampling_poll = target.pg_wait_sampling_poll;
  options.local = target.local;
  return options;
}

}  // namespace pgwaitprof::collectors
