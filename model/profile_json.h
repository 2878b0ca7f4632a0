// The report.json codec of the traced source's own counts (sampler.trace), beside the wait
// profile's (to_json(Profile) and profile_from_json, declared in run.h): model/profile_json.cc.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>

#include "model/run.h"

namespace pgwaitprof::model {

// null without counts; nullopt from anything but an object.
nlohmann::json trace_counts_to_json(const std::optional<TraceCounts>& counts);
std::optional<TraceCounts> trace_counts_from_json(const nlohmann::json& j);

}  // namespace pgwaitprof::model
