// The facts the text and Markdown reports both state (report_render.cc): see report_facts.cc.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "exporters/render/report_common.h"
#include "model/run.h"

namespace pgwaitprof::exporters::report_detail {

std::string percent(double fraction);  // "12.3%"
// Fixed decimals, or "-" for a value pgbench printed as -nan.
std::string number_or_dash(double value, int decimals);
// Width of the name column of the profile table: the hackers' 32 columns unless a name (as
// printed, escaped) is longer.
size_t label_width(const std::vector<std::string>& labels, std::string_view title);
std::string profile_title(const ProfileTable& table, const RenderOptions& options);
std::string profile_heading(const model::Run& run, const ProfileTable& table,
                            const RenderOptions& options);
std::string workload_line(const model::Run& run);
std::vector<std::pair<std::string, std::string>> header_facts(const model::Run& run,
                                                              const model::Summary& summary);
std::vector<std::pair<std::string, std::string>> environment_facts(const model::Environment& env);
std::string timeline_legend(const model::Run& run);

}  // namespace pgwaitprof::exporters::report_detail
