// The target sampler with a remote feed (run --sampler-host): the feed's opening is the
// connection, its delivery the sampling, and what it delivers reaches the sinks as a local
// source's samples do; a channel that ends is a lost connection (an outage in the run, then a
// new channel after the back-off).
#include "collectors/target_sampler.h"

namespace pgwaitprof::collectors {

asio::awaitable<CollectResult> TargetSampler::connect_remote() {
  auto error = co_await remote_->open(options_, intake_);
  if (error) co_return error;
  delivered_ = false;
  // A refusal that has passed (a daemon target's sampler host back, its program installed) no
  // longer fails the runs that wait for a sample.
  refused_ = false;
  co_return std::nullopt;
}

asio::awaitable<void> TargetSampler::sample_remote() {
  auto reason = co_await remote_->deliver(intake_);
  if (state_ != SamplerState::kStopping) connection_lost(reason);
}

void TargetSampler::Intake::on_snapshot(const model::Snapshot& snapshot) {
  // The latest snapshot is kept as a local source keeps it (latest_snapshot()).
  sampler_.snapshot_ = snapshot;
  sampler_.fanout_.on_snapshot(sampler_.snapshot_);
  sampler_.delivered_ = true;
  // The samples of the feed's opening do not wake a run yet: it would attach its recorder to a
  // sampler that is not connected, and record an outage of the opening's last milliseconds.
  if (sampler_.state_ == SamplerState::kSampling) sampler_.sample_delivered_.notify();
}

void TargetSampler::Intake::on_profile_delta(const model::Profile& delta,
                                             model::SystemClock::time_point at) {
  sampler_.fanout_.on_profile_delta(delta, at);
  if (sampler_.state_ == SamplerState::kSampling) sampler_.sample_delivered_.notify();
}

void TargetSampler::Intake::on_source(model::SamplerSource source, std::string_view reason) {
  sampler_.in_use_ = source;
  sampler_.reason_ = std::string(reason);
  sampler_.fanout_.on_source(source, reason);
}

void TargetSampler::Intake::on_connection_state(bool up, model::SteadyClock::time_point at,
                                                std::string_view reason) {
  // The remote sampler's own connection to the server: an outage as this sampler's would be.
  sampler_.fanout_.on_connection_state(up, at, reason);
}

}  // namespace pgwaitprof::collectors
