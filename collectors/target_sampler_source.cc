// The target sampler's choice of source at each connection: the one asked for, or under `auto`
// the traced source where the kernel allows it, else the memory source where the server's
// memory can be read, else pg_stat_activity, each refusal logged with its reason.
#include "base/logging.h"
#include "collectors/target_sampler.h"

namespace pgwaitprof::collectors {
namespace {

auto source_choice_log() {
  static auto logger = base::component_logger("sampler");
  return logger;
}

}  // namespace

void TargetSampler::use_source(Collector* source, model::SamplerSource kind, std::string reason) {
  source_ = source;
  activity_ = dynamic_cast<ActivitySource*>(source);
  memory_ = dynamic_cast<memory::MemorySource*>(source);
  in_use_ = kind;
  reason_ = std::move(reason);
  fanout_.on_source(in_use_, reason_);
}

asio::awaitable<CollectResult> TargetSampler::prepare_source() {
  using model::SamplerSource;
  if (options_.source != SamplerSource::kAuto) {
    Collector* named = memory_source_     ? static_cast<Collector*>(memory_source_.get())
                       : activity_source_ ? static_cast<Collector*>(activity_source_.get())
                       : trace_source_    ? static_cast<Collector*>(trace_source_.get())
                                          : wait_sampling_source_.get();
    use_source(named, options_.source, "");
    co_return co_await source_->prepare(session_);
  }
  std::string why_not;
  // A server in a container or a chroot on this host is local too; one in a PID namespace
  // that this one cannot see says so. (No co_await inside a conditional expression: GCC 12
  // destroys its temporary twice.)
  std::optional<base::Error> not_here;
  pid_t postmaster = 0;
  if (options_.local == config::LocalMode::kAuto) {
    auto here = co_await find_session_server(session_);
    if (!here) not_here = here.error();
    if (here) postmaster = here->postmaster();
  }
  if (options_.local == config::LocalMode::kNo) {
    why_not = "the target is set as not on this host (local: false)";
  } else if (not_here) {
    why_not = not_local_reason(*not_here);
  } else {
    // A run's: traced in the kernel where it allows it, else read from memory (issue 48).
    std::string untraced;
    if (trace_source_) {
      auto refused = co_await prepare_traced(postmaster);
      if (!refused) co_return std::nullopt;
      if (!refused->refused) co_return refused;  // the connection failed: retried as any attempt
      untraced = " (not traced: " + refused->message + ")";
    }
    auto refused = co_await memory_source_->prepare(session_);
    if (!refused) {
      use_source(memory_source_.get(), SamplerSource::kMemory,
                 "local server, read " + memory_source_->attachment().rights + untraced);
      co_return std::nullopt;
    }
    if (!refused->refused) co_return refused;
    why_not = memory::refusal_reason(refused->message);
  }
  if (why_not != reason_) {
    source_choice_log()->info(
        "memory source not used target={} reason=\"{}\": sampling pg_stat_activity", options_.name,
        why_not);
  }
  use_source(activity_source_.get(), SamplerSource::kActivity, why_not);
  co_return co_await source_->prepare(session_);
}

asio::awaitable<CollectResult> TargetSampler::prepare_traced(pid_t postmaster) {
  // Another target traces this server already: no attach, no programs (hundreds of targets on
  // one server attach once each, not twice).
  if (auto refused = trace_source_->once_per_server_refusal(postmaster)) {
    co_return CollectorError{*refused, "", false, true};
  }
  auto refused = co_await trace_source_->prepare(session_);
  if (!refused) {
    use_source(trace_source_.get(), model::SamplerSource::kTrace,
               "local server, traced in the kernel");
    co_return std::nullopt;
  }
  if (refused->refused) {
    // "trace source refused: WHY" -> WHY, said once per reason.
    if (refused->message.starts_with(trace::kTraceRefused)) {
      refused->message.erase(0, trace::kTraceRefused.size());
    }
    if (refused->message != untraced_) {
      source_choice_log()->info("trace source not used target={} reason=\"{}\"", options_.name,
                                refused->message);
      untraced_ = refused->message;
    }
  }
  co_return refused;
}

void TargetSampler::on_failed_attempt(const CollectorError& error,
                                      std::chrono::milliseconds retry_in) {
  if (error.refused && !refused_) {
    refused_ = true;
    sample_delivered_.notify();  // a run waiting for its first sample fails now
  }
  // Once per state change, not per attempt.
  if (error.message == last_error_) return;
  const auto target = mask_password(options_.conninfo);
  if (error.connection_lost) {
    source_choice_log()->error("could not connect to \"{}\": {} target={} retry_in_ms={}", target,
                               error.message, options_.name, retry_in.count());
  } else {
    source_choice_log()->error(
        "could not set up sampling of \"{}\": {} target={} source={} retry_in_ms={}", target,
        error.message, options_.name, to_string(options_.source), retry_in.count());
  }
  last_error_ = error.message;
}

}  // namespace pgwaitprof::collectors
