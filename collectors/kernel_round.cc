// The process's round of kernel readings.
#include "collectors/kernel_round.h"

#include <chrono>
#include <unordered_map>

namespace pgwaitprof::collectors {
namespace {

struct Round {
  std::mutex mutex;
  int64_t number = -1;
  model::SteadyClock::time_point taken_at{};
  int64_t taken_at_epoch_us = 0;
  std::unordered_map<pid_t, std::optional<Schedstat>> schedstats;
  std::unordered_map<pid_t, std::optional<base::Seconds>> reaped;
};

Round& round() {
  static Round shared;
  return shared;
}

template <typename Value, typename Read>
std::optional<Value> remembered(std::unordered_map<pid_t, std::optional<Value>>& readings,
                                pid_t process, Read&& read) {
  const auto [entry, added] = readings.try_emplace(process);
  if (added) entry->second = read(process);
  return entry->second;
}

}  // namespace

int64_t KernelRound::number(model::SteadyClock::time_point now) {
  return std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
}

KernelRound::KernelRound(model::SteadyClock::time_point now) : lock_(round().mutex) {
  auto& shared = round();
  const auto wanted = number(now);
  if (shared.number >= wanted) return;
  shared.number = wanted;
  shared.taken_at = model::SteadyClock::now();
  shared.taken_at_epoch_us = std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
  shared.schedstats.clear();
  shared.reaped.clear();
}

int64_t KernelRound::number() const { return round().number; }

model::SteadyClock::time_point KernelRound::taken_at() const { return round().taken_at; }

int64_t KernelRound::taken_at_epoch_us() const { return round().taken_at_epoch_us; }

std::optional<Schedstat> KernelRound::schedstat(pid_t process, ReadSchedstat read) {
  return remembered(round().schedstats, process, read);
}

std::optional<base::Seconds> KernelRound::reaped_children_cpu(pid_t process, ReadReaped read) {
  return remembered(round().reaped, process, read);
}

}  // namespace pgwaitprof::collectors
