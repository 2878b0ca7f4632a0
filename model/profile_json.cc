// The report.json codec of a run's wait profile (its sampled counts and the traced source's
// times per key) and of the traced source's own counts: split from run.cc, which holds the rest.
#include "model/profile_json.h"

#include <nlohmann/json.hpp>

namespace pgwaitprof::model {

using nlohmann::json;

json trace_counts_to_json(const std::optional<TraceCounts>& counts) {
  if (!counts) return nullptr;
  return {{"switches", counts->switches},
          {"wakeups", counts->wakeups},
          {"samples", counts->samples},
          {"failed_reads", counts->failed_reads},
          {"tracked_full", counts->tracked_full},
          {"keys_full", counts->keys_full},
          {"lost", counts->lost},
          {"tracked", counts->tracked},
          {"switch_ns", counts->switch_ns},
          {"witness",
           {{"on_cpu_s", counts->witness.on_cpu_s},
            {"runqueue_s", counts->witness.runqueue_s},
            {"kernel_on_cpu_s", counts->witness.kernel_on_cpu_s},
            {"kernel_runqueue_s", counts->witness.kernel_runqueue_s}}}};
}

std::optional<TraceCounts> trace_counts_from_json(const json& j) {
  if (!j.is_object()) return std::nullopt;
  TraceCounts counts;
  counts.switches = j.value("switches", uint64_t{0});
  counts.wakeups = j.value("wakeups", uint64_t{0});
  counts.samples = j.value("samples", uint64_t{0});
  counts.failed_reads = j.value("failed_reads", uint64_t{0});
  counts.tracked_full = j.value("tracked_full", uint64_t{0});
  counts.keys_full = j.value("keys_full", uint64_t{0});
  counts.lost = j.value("lost", uint64_t{0});
  counts.tracked = j.value("tracked", uint64_t{0});
  counts.switch_ns = j.value("switch_ns", 0.0);
  if (const auto witness = j.find("witness"); witness != j.end() && witness->is_object()) {
    counts.witness.on_cpu_s = witness->value("on_cpu_s", 0.0);
    counts.witness.runqueue_s = witness->value("runqueue_s", 0.0);
    counts.witness.kernel_on_cpu_s = witness->value("kernel_on_cpu_s", 0.0);
    counts.witness.kernel_runqueue_s = witness->value("kernel_runqueue_s", 0.0);
  }
  return counts;
}

// The traced source's parts of each key (schema 10): the histogram as [bucket, count] pairs of
// its non-empty buckets.
namespace {

json traced_to_json(const std::map<WaitKey, TracedTime>& traced) {
  json entries = json::array();
  for (const auto& [key, time] : traced) {
    json histogram = json::array();
    for (int index = 0; index < kTracedBuckets; ++index) {
      if (time.histogram[index] > 0) histogram.push_back({index, time.histogram[index]});
    }
    entries.push_back({{"backend_type", key.backend_type},
                       {"state", key.state},
                       {"wait_event_type", key.wait_event_type},
                       {"wait_event", key.wait_event},
                       {"blocked_s", time.blocked_s},
                       {"runqueue_s", time.runqueue_s},
                       {"on_cpu_s", time.on_cpu_s},
                       {"waits", time.waits},
                       {"ended_blocked_s", time.ended_blocked_s},
                       {"min_s", time.min_s},
                       {"max_s", time.max_s},
                       {"histogram", std::move(histogram)}});
  }
  return entries;
}

void traced_from_json(const json& j, Profile& profile) {
  for (const auto& entry : j) {
    TracedTime time;
    time.blocked_s = entry.at("blocked_s").get<double>();
    time.runqueue_s = entry.at("runqueue_s").get<double>();
    time.on_cpu_s = entry.at("on_cpu_s").get<double>();
    time.waits = entry.at("waits").get<uint64_t>();
    // Before schema 13 the waits' time was blocked_s (a wait in progress was not charged yet).
    time.ended_blocked_s = entry.value("ended_blocked_s", time.blocked_s);
    time.min_s = entry.value("min_s", 0.0);
    time.max_s = entry.value("max_s", 0.0);
    for (const auto& pair : entry.at("histogram")) {
      const int index = pair.at(0).get<int>();
      if (index >= 0 && index < kTracedBuckets) time.histogram[index] = pair.at(1).get<uint64_t>();
    }
    profile.add_traced(
        {entry.at("backend_type").get<std::string>(), entry.at("state").get<std::string>(),
         entry.at("wait_event_type").get<std::string>(), entry.at("wait_event").get<std::string>()},
        time);
  }
}

}  // namespace

void to_json(json& j, const Profile& profile) {
  json entries = json::array();
  for (const auto& [key, count] : profile.counts()) {
    entries.push_back({{"backend_type", key.backend_type},
                       {"state", key.state},
                       {"wait_event_type", key.wait_event_type},
                       {"wait_event", key.wait_event},
                       {"count", count}});
  }
  j = {{"snapshots", profile.snapshots()}, {"entries", std::move(entries)}};
  if (profile.exact()) j["traced"] = traced_to_json(profile.traced());
}

Profile profile_from_json(const json& j) {
  Profile profile;
  profile.add_snapshots(j.at("snapshots").get<uint64_t>());
  for (const auto& entry : j.at("entries")) {
    profile.add(
        {entry.at("backend_type").get<std::string>(), entry.at("state").get<std::string>(),
         entry.at("wait_event_type").get<std::string>(), entry.at("wait_event").get<std::string>()},
        entry.at("count").get<uint64_t>());
  }
  if (j.contains("traced")) traced_from_json(j.at("traced"), profile);
  return profile;
}

}  // namespace pgwaitprof::model
