// The report.json codec of a run's wait profile and of the traced source's own counts
// (sampler.trace): model/profile_json.cc, split from run.cc (which declares the profile's codec
// to its users too).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>

#include "model/profile.h"
#include "model/sampler_source.h"

namespace pgwaitprof::model {

void to_json(nlohmann::json& json, const Profile& profile);
Profile profile_from_json(const nlohmann::json& json);

// null without counts; nullopt from anything but an object.
nlohmann::json trace_counts_to_json(const std::optional<TraceCounts>& counts);
std::optional<TraceCounts> trace_counts_from_json(const nlohmann::json& j);

}  // namespace pgwaitprof::model
