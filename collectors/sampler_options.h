// What a target's sampler needs to know, built in one place from a target's configuration
// (config::TargetConfig), whether it came from the daemon's file, a matrix plan or `run`'s flags.
#pragma once

#include <chrono>
#include <string>

#include "config/daemon_config.h"
#include "model/sampler_source.h"

namespace pgwaitprof::collectors {

struct SamplerOptions {
  std::string name;      // the target's name, the `target` label
  std::string conninfo;  // "" = PG* environment variables
  double hz = 0;         // ticks per second of the activity source
  // With auto, the traced source's in-kernel on-CPU samples per second where it is chosen (0:
  // hz); a named traced source's are hz.
  double trace_hz = 0;
  bool auto_traces = false;  // auto may choose the traced source (config::TargetConfig)
  model::SamplerSource source = model::SamplerSource::kAuto;
  std::chrono::milliseconds wait_sampling_poll{0};
  std::chrono::milliseconds connect_timeout{5000};
  config::LocalMode local = config::LocalMode::kAuto;
};

SamplerOptions sampler_options(const config::TargetConfig& target);

}  // namespace pgwaitprof::collectors
