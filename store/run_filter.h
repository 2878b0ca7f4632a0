// Which runs of the history a command is about: the filters of `runs` and `trend`
// (--label GLOB, --workload, --since/--until, --status, --setting NAME=VALUE, --host,
// --tag KEY=GLOB), and the same as one expression for `compare`
// ("label=nightly-*;setting.synchronous_commit=on;tag.loadgen=benchbase").
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/expected.h"
#include "store/run_summary.h"

namespace pgwaitprof::store {

struct RunFilter {
  std::optional<std::string> label;     // a glob (fnmatch): "nightly-*"
  std::optional<std::string> workload;  // exact
  std::optional<std::string> status;    // completed, interrupted or failed
  std::optional<std::string> host;      // a glob
  std::optional<std::string> since;     // "YYYY-MM-DDTHH:MM:SS" UTC, inclusive
  std::optional<std::string> until;     // the same, inclusive
  std::vector<std::pair<std::string, std::string>> settings;  // recorded non-default settings
  std::vector<std::pair<std::string, std::string>> tags;      // KEY and a glob of its value

  bool matches(const RunSummary& run) const;
  bool empty() const;
};

std::vector<RunSummary> filter_runs(const std::vector<RunSummary>& runs, const RunFilter& filter);

// A time bound: "2026-11-30", "2026-11-30T12:00[:00][Z]" (UTC, a space for the T too), or an
// age before `now`: "90d", "12h", "30m", "2w", "45s". `end_of_day` makes a bare date its last
// second (for --until). Returns "YYYY-MM-DDTHH:MM:SS" or an error naming `option`.
base::Expected<std::string> parse_time_bound(
    const std::string& option, const std::string& text, bool end_of_day,
    std::chrono::system_clock::time_point now = std::chrono::system_clock::now());

// An age: "90d", "12h", "30m", "2w", "45s".
std::optional<std::chrono::seconds> parse_age(const std::string& text);

// "NAME=VALUE" of --setting.
base::Expected<std::pair<std::string, std::string>> parse_setting(const std::string& text);

// Builds the filter of the command-line strings; the error is the usage error's line.
struct FilterOptions {
  std::optional<std::string> label, workload, status, host, since, until;
  std::vector<std::string> settings;
  std::vector<std::string> tags;  // "KEY=GLOB"
};
base::Expected<RunFilter> make_filter(const FilterOptions& options);

// `compare`'s filter expression: terms "KEY=VALUE" separated by ';' (or ' and '), keys label,
// workload, status, host, since, until, setting.NAME and tag.KEY. nullopt when `text` is no
// expression (a key is not one of these), an error when it is one with a bad value.
std::optional<base::Expected<RunFilter>> parse_filter_expression(const std::string& text);

}  // namespace pgwaitprof::store
