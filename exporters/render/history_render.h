// The run history and trends as text tables, Markdown, CSV, JSON and an HTML page.
#pragma once

#include <string>
#include <vector>

#include "model/scalability.h"
#include "store/run_summary.h"
#include "store/trend.h"
#include "store/trend_changes.h"

namespace pgwaitprof::exporters {

bool valid_runs_format(const std::string& format);   // text, md, csv, json
bool valid_trend_format(const std::string& format);  // text, md, json, html

// Newest first as given. `format` is one valid_runs_format accepts.
std::string render_runs(const std::vector<store::RunSummary>& runs, const std::string& format);

std::string render_trend(const store::Trend& trend, const std::string& format);
// The change points of `trend` (its default rule): text, md, csv, json or html.
std::string render_trend_changes(const store::TrendChanges& changes, const std::string& format);

// `runs --format scaling`: the runs side by side by client count, as a sweep reads (the
// quickstart ends with it): clients, the load generator's whole-run tps, the top waits with
// their shares, the CPU share, tps per client against one client's, and where it stops
// scaling (model::find_knee, computed by the caller).
std::string render_scaling(const std::vector<store::RunSummary>& runs, const model::Knee& knee);

}  // namespace pgwaitprof::exporters
