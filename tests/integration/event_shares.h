// The shares of a run's waits among the wait events that block, read from a report.json
// profile: a sampled source's samples or the traced source's time, by "type | event"; and the
// total variation distance between two such distributions. For issue 48's witness that sets the
// traced source beside the memory source over one window of one load (TraceSourceTest).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "model/wait_key.h"

namespace pgwaitprof::testing {

// Amounts by "type | event": samples, seconds, or shares (summing to 1).
using EventAmounts = std::map<std::string, double>;

// An entry's wait key (of profile.entries or profile.traced).
inline model::WaitKey entry_key(const nlohmann::json& entry) {
  return {entry.at("backend_type").get<std::string>(), entry.at("state").get<std::string>(),
          entry.at("wait_event_type").get<std::string>(),
          entry.at("wait_event").get<std::string>()};
}

// A wait that blocks, of the load: not CPU, not the kernel's keys (a process asleep without a
// wait event, which the two sources find in different ways), not idle (idle sessions and
// background processes asleep in their main loop: no report's shares count them).
inline bool load_blocking_wait(const model::WaitKey& key) {
  return !model::is_idle(key) && key.wait_event_type != model::kCpu &&
         key.wait_event_type != model::kKernel;
}

// A sampled profile's samples of each such event (profile.entries' counts).
inline EventAmounts sampled_events(const nlohmann::json& profile) {
  EventAmounts samples;
  for (const auto& entry : profile.at("entries")) {
    const auto key = entry_key(entry);
    if (load_blocking_wait(key))
      samples[model::display_name(key)] += entry.at("count").get<double>();
  }
  return samples;
}

// Which of a traced key's parts are summed.
struct TracedParts {
  bool blocked = true;   // switched out not runnable, until woken
  bool runqueue = true;  // runnable after the wake-up (or preempted), the event still set
  bool on_cpu = true;    // on a CPU with the event set (sampled in the kernel)
};

// A traced profile's seconds of each such event (profile.traced), of the parts asked for.
inline EventAmounts traced_events(const nlohmann::json& profile, TracedParts parts = {}) {
  EventAmounts seconds;
  for (const auto& entry : profile.value("traced", nlohmann::json::array())) {
    const auto key = entry_key(entry);
    if (!load_blocking_wait(key)) continue;
    double time = 0;
    if (parts.blocked) time += entry.at("blocked_s").get<double>();
    if (parts.runqueue) time += entry.at("runqueue_s").get<double>();
    if (parts.on_cpu) time += entry.at("on_cpu_s").get<double>();
    seconds[model::display_name(key)] += time;
  }
  return seconds;
}

inline double amounts_total(const EventAmounts& amounts) {
  double total = 0;
  for (const auto& [event, amount] : amounts) total += amount;
  return total;
}

// Each event's share of the total; empty for a total of 0.
inline EventAmounts event_shares(const EventAmounts& amounts) {
  const double total = amounts_total(amounts);
  EventAmounts shares;
  if (total <= 0) return shares;
  for (const auto& [event, amount] : amounts) shares[event] = amount / total;
  return shares;
}

// 1/2 sum |p_i - q_i| over the events of either, an event missing from one at share 0.
inline double total_variation_distance(const EventAmounts& p, const EventAmounts& q) {
  std::set<std::string> events;
  for (const auto& [event, share] : p) events.insert(event);
  for (const auto& [event, share] : q) events.insert(event);
  double distance = 0;
  for (const auto& event : events) {
    const double first = p.contains(event) ? p.at(event) : 0;
    const double second = q.contains(event) ? q.at(event) : 0;
    distance += std::abs(first - second);
  }
  return distance / 2;
}

// The two distributions side by side, the largest event first: each one's amount and share,
// and the difference of the shares.
inline std::string shares_table(const std::string& p_name, const EventAmounts& p_amounts,
                                const std::string& q_name, const EventAmounts& q_amounts) {
  const auto p = event_shares(p_amounts);
  const auto q = event_shares(q_amounts);
  std::vector<std::pair<double, std::string>> events;
  for (const auto& [event, share] : p) events.emplace_back(share, event);
  for (const auto& [event, share] : q) {
    if (!p.contains(event)) events.emplace_back(share, event);
  }
  std::sort(events.begin(), events.end(), std::greater<>());
  std::string text = fmt::format("{:<36} {:>14} {:>8} {:>14} {:>8} {:>8}\n", "wait event", p_name,
                                 "share", q_name, "share", "diff");
  for (const auto& [largest, event] : events) {
    const double p_share = p.contains(event) ? p.at(event) : 0;
    const double q_share = q.contains(event) ? q.at(event) : 0;
    text += fmt::format("{:<36} {:>14.3f} {:>7.2f}% {:>14.3f} {:>7.2f}% {:>+7.2f}%\n", event,
                        p_amounts.contains(event) ? p_amounts.at(event) : 0.0, 100 * p_share,
                        q_amounts.contains(event) ? q_amounts.at(event) : 0.0, 100 * q_share,
                        100 * (p_share - q_share));
  }
  text += fmt::format("{:<36} {:>14.3f} {:>8} {:>14.3f}\n", "total", amounts_total(p_amounts), "",
                      amounts_total(q_amounts));
  return text;
}

// The traced profile's parts of each such event in seconds, the largest first: where the
// traced time and the samples part, which part it is.
inline std::string traced_parts_table(const nlohmann::json& profile) {
  const auto blocked = traced_events(profile, {true, false, false});
  const auto runqueue = traced_events(profile, {false, true, false});
  const auto on_cpu = traced_events(profile, {false, false, true});
  std::vector<std::pair<double, std::string>> events;
  for (const auto& [event, seconds] : traced_events(profile)) events.emplace_back(seconds, event);
  std::sort(events.begin(), events.end(), std::greater<>());
  std::string text = fmt::format("{:<36} {:>10} {:>10} {:>10}\n", "wait event (traced)",
                                 "blocked s", "run queue", "on a CPU");
  for (const auto& [seconds, event] : events) {
    text += fmt::format("{:<36} {:>10.3f} {:>10.3f} {:>10.3f}\n", event, blocked.at(event),
                        runqueue.at(event), on_cpu.at(event));
  }
  return text;
}

}  // namespace pgwaitprof::testing
