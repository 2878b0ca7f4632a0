// On-CPU samples aggregated: folded stacks, self counts, per-interval top functions; the codec.
#include "model/cpu_profile.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

namespace pgwaitprof::model {
namespace {

using json = nlohmann::json;

constexpr std::string_view kOtherStacks = "[other stacks]";

json functions_to_json(const std::vector<CpuFunction>& functions) {
  json list = json::array();
  for (const auto& function : functions) {
    list.push_back(
        {{"function", function.name}, {"kernel", function.kernel}, {"samples", function.samples}});
  }
  return list;
}

std::vector<CpuFunction> functions_from_json(const json& list) {
  std::vector<CpuFunction> functions;
  for (const auto& entry : list) {
    functions.push_back({entry.at("function").get<std::string>(), entry.value("kernel", false),
                         entry.at("samples").get<uint64_t>()});
  }
  return functions;
}

}  // namespace

bool is_kernel_frame(std::string_view frame) { return frame.ends_with(kKernelFrameSuffix); }

CpuFunction frame_function(std::string_view frame) {
  if (!is_kernel_frame(frame)) return {std::string(frame), false, 0};
  return {std::string(frame.substr(0, frame.size() - kKernelFrameSuffix.size())), true, 0};
}

std::string function_frame(const CpuFunction& function) {
  return function.kernel ? function.name + std::string(kKernelFrameSuffix) : function.name;
}

std::string function_label(const CpuFunction& function) {
  return function.kernel ? function.name + " [kernel]" : function.name;
}

std::string fold_frames(const std::vector<std::string>& frames) {
  std::string folded;
  for (const auto& frame : frames) {
    if (!folded.empty()) folded += ';';
    const size_t from = folded.size();
    folded += frame.empty() ? "[unknown]" : frame;
    // flamegraph.pl splits frames on ';' and lines on line breaks: neither may be in a name.
    for (auto character = folded.begin() + static_cast<std::ptrdiff_t>(from);
         character != folded.end(); ++character) {
      if (*character == ';') *character = ':';
      if (static_cast<unsigned char>(*character) < 0x20) *character = '?';
    }
  }
  return folded.empty() ? "[unknown]" : folded;
}

std::string folded_text(const CpuGroup& group) {
  std::vector<std::pair<std::string_view, uint64_t>> stacks(group.folded.begin(),
                                                            group.folded.end());
  std::stable_sort(stacks.begin(), stacks.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string text;
  for (const auto& [stack, count] : stacks) {
    text += stack;
    text += ' ';
    text += std::to_string(count);
    text += '\n';
  }
  return text;
}

double cpu_aas(uint64_t samples, const CpuProfile& profile) {
  const double ticks = profile.hz * profile.duration.count();
  return ticks > 0 ? static_cast<double>(samples) / ticks : 0;
}

std::vector<CpuFunction> top_functions(const std::map<std::string, uint64_t>& self, size_t limit) {
  std::vector<CpuFunction> functions;
  functions.reserve(self.size());
  for (const auto& [frame, count] : self) {
    auto function = frame_function(frame);
    function.samples = count;
    functions.push_back(std::move(function));
  }
  std::sort(functions.begin(), functions.end(), [](const auto& a, const auto& b) {
    if (a.samples != b.samples) return a.samples > b.samples;
    if (a.name != b.name) return a.name < b.name;
    return a.kernel < b.kernel;
  });
  if (functions.size() > limit) functions.resize(limit);
  return functions;
}

void CpuProfileBuilder::begin_batch(const CpuSampleBatch& batch) {
  if (batch.hz > 0) hz_ = batch.hz;
  if (batch.cpus > 0) cpus_ = batch.cpus;
  lost_ += batch.lost;
}

void CpuProfileBuilder::add_sample(const CpuSample& sample, size_t interval) {
  ++samples_;
  auto& group = groups_[sample.backend_type];
  ++group.samples;
  auto stack = fold_frames(sample.frames);
  auto found = group.folded.find(stack);
  if (found != group.folded.end()) {
    ++found->second;
  } else {
    ++group.folded[group.folded.size() < kMaxCpuStacks ? std::move(stack)
                                                       : std::string(kOtherStacks)];
  }
  const std::string leaf = sample.frames.empty() ? "[unknown]" : sample.frames.back();
  ++group.self[leaf];
  if (sample.backend_type != kCpuClientBackends) return;
  auto& slice = intervals_[interval];
  ++slice.samples;
  ++slice.self[leaf];
}

CpuProfile CpuProfileBuilder::profile(base::Seconds duration) const {
  CpuProfile profile;
  profile.hz = hz_;
  profile.cpus = cpus_;
  profile.duration = duration;
  profile.samples = samples_;
  profile.lost = lost_;
  for (const auto& [name, group] : groups_) {
    auto& out = profile.groups[name];
    out.samples = group.samples;
    out.folded = group.folded;
    out.self = top_functions(group.self, group.self.size());
  }
  // Each interval's own top functions, and its counts of the run's top functions wherever they
  // ran in it, so that a run's largest functions have a whole series for batch means.
  std::set<std::string> tracked;
  if (const auto clients = groups_.find(std::string(kCpuClientBackends));
      clients != groups_.end()) {
    for (const auto& function : top_functions(clients->second.self, kCpuRunTracked)) {
      tracked.insert(function_frame(function));
    }
  }
  for (const auto& [index, slice] : intervals_) {
    std::map<std::string, uint64_t> kept;
    for (const auto& function : top_functions(slice.self, kCpuIntervalTop)) {
      kept[function_frame(function)] = function.samples;
    }
    for (const auto& frame : tracked) {
      if (const auto found = slice.self.find(frame); found != slice.self.end()) {
        kept[frame] = found->second;
      }
    }
    profile.intervals[index] = {slice.samples, top_functions(kept, kept.size())};
  }
  return profile;
}

void to_json(json& j, const CpuProfile& profile) {
  json groups = json::object();
  for (const auto& [name, group] : profile.groups) {
    groups[name] = {{"samples", group.samples},
                    {"self", functions_to_json(group.self)},
                    {"folded", group.folded}};
  }
  json intervals = json::array();
  for (const auto& [index, slice] : profile.intervals) {
    intervals.push_back({{"interval", index},
                         {"client_samples", slice.client_samples},
                         {"top", functions_to_json(slice.top)}});
  }
  j = {{"hz", profile.hz},
       {"cpus", profile.cpus},
       {"duration_s", profile.duration.count()},
       {"samples", profile.samples},
       {"lost", profile.lost},
       {"groups", std::move(groups)},
       {"intervals", std::move(intervals)}};
}

void from_json(const json& j, CpuProfile& profile) {
  profile.hz = j.at("hz").get<int>();
  profile.cpus = j.value("cpus", 0);
  profile.duration = base::Seconds(j.value("duration_s", 0.0));
  profile.samples = j.at("samples").get<uint64_t>();
  profile.lost = j.value("lost", uint64_t{0});
  profile.groups.clear();
  for (const auto& [name, entry] : j.at("groups").items()) {
    auto& group = profile.groups[name];
    group.samples = entry.at("samples").get<uint64_t>();
    group.self = functions_from_json(entry.at("self"));
    group.folded = entry.value("folded", std::map<std::string, uint64_t>{});
  }
  profile.intervals.clear();
  for (const auto& entry : j.value("intervals", json::array())) {
    profile.intervals[entry.at("interval").get<size_t>()] = {
        entry.at("client_samples").get<uint64_t>(), functions_from_json(entry.at("top"))};
  }
}

}  // namespace pgwaitprof::model
