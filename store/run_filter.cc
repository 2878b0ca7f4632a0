// Run filters.
#include "store/run_filter.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <string_view>

#include "config/numbers.h"

namespace pgwaitprof::store {
namespace {

bool glob_matches(const std::string& pattern, const std::string& text) {
  return fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

bool equal_ignoring_case(const std::string& a, const std::string& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

bool has_setting(const RunSummary& run, const std::pair<std::string, std::string>& wanted) {
  for (const auto& [name, value] : run.settings) {
    if (equal_ignoring_case(name, wanted.first)) return value == wanted.second;
  }
  return false;
}

base::Error bad_value(const std::string& option, const std::string& text,
                      std::string_view why = "") {
  return base::Error{why.empty()
                         ? fmt::format("invalid value for {}: \"{}\"", option, text)
                         : fmt::format("invalid value for {}: \"{}\" ({})", option, text, why)};
}

}  // namespace

bool RunFilter::matches(const RunSummary& run) const {
  if (label && !glob_matches(*label, run.label)) return false;
  if (workload && run.workload != *workload) return false;
  if (status && run.status != *status) return false;
  if (host && !glob_matches(*host, run.host)) return false;
  const auto started = run.started_at.substr(0, 19);
  if (since && started < *since) return false;
  if (until && started > *until) return false;
  const auto has_tag = [&](const auto& wanted) {
    const auto tag = run.tags.find(wanted.first);
    return tag != run.tags.end() && glob_matches(wanted.second, tag->second);
  };
  return std::all_of(settings.begin(), settings.end(),
                     [&](const auto& setting) { return has_setting(run, setting); }) &&
         std::all_of(tags.begin(), tags.end(), has_tag);
}

bool RunFilter::empty() const {
  return !label && !workload && !status && !host && !since && !until && settings.empty() &&
         tags.empty();
}

std::vector<RunSummary> filter_runs(const std::vector<RunSummary>& runs, const RunFilter& filter) {
  std::vector<RunSummary> kept;
  std::copy_if(runs.begin(), runs.end(), std::back_inserter(kept),
               [&](const RunSummary& run) { return filter.matches(run); });
  return kept;
}

std::optional<std::chrono::seconds> parse_age(const std::string& text) {
  static const std::regex pattern(R"((\d{1,9})\s*([smhdw]))");
  std::smatch match;
  if (!std::regex_match(text, match, pattern)) return std::nullopt;
  const long long count = std::stoll(match[1]);
  static const std::map<char, long long> unit = {
      {'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}, {'w', 7 * 86400}};
  // A bound far enough back to hold every run, and near enough that "now - age" is a time.
  constexpr long long kMaxAgeS = 100LL * 366 * 86400;
  const long long age_s = count * unit.at(match[2].str()[0]);
  if (config::integer_in_range(age_s, 0, kMaxAgeS)) return std::nullopt;
  return std::chrono::seconds(age_s);
}

base::Expected<std::string> parse_time_bound(const std::string& option, const std::string& text,
                                             bool end_of_day,
                                             std::chrono::system_clock::time_point now) {
  if (const auto age = parse_age(text)) {
    return fmt::format("{:%Y-%m-%dT%H:%M:%S}",
                       fmt::gmtime(std::chrono::system_clock::to_time_t(now - *age)));
  }
  static const std::regex pattern(
      R"((\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?Z?)?)");
  std::smatch match;
  if (!std::regex_match(text, match, pattern)) return bad_value(option, text);
  const auto field = [&](int index) { return std::stoi(match[index].str()); };
  const std::chrono::year_month_day date{std::chrono::year(field(1)),
                                         std::chrono::month(static_cast<unsigned>(field(2))),
                                         std::chrono::day(static_cast<unsigned>(field(3)))};
  // "2026-13-45" and "2026-02-31" are no dates, "25:99" no time: never a bound silently.
  if (!date.ok()) return bad_value(option, text, "no such date");
  const std::string day = text.substr(0, 10);
  if (!match[4].matched) return day + (end_of_day ? "T23:59:59" : "T00:00:00");
  if (field(4) > 23 || field(5) > 59 || (match[6].matched && field(6) > 59)) {
    return bad_value(option, text, "no such time of day");
  }
  return fmt::format("{}T{}:{}:{}", day, match[4].str(), match[5].str(),
                     match[6].matched ? match[6].str() : "00");
}

base::Expected<std::pair<std::string, std::string>> parse_setting(const std::string& text) {
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0) return bad_value("--setting", text);
  return std::pair{text.substr(0, equals), text.substr(equals + 1)};
}

base::Expected<RunFilter> make_filter(const FilterOptions& options) {
  RunFilter filter;
  filter.label = options.label;
  filter.workload = options.workload;
  filter.host = options.host;
  if (options.status) {
    if (!model::parse_run_status(*options.status)) return bad_value("--status", *options.status);
    filter.status = options.status;
  }
  if (options.since) {
    auto since = parse_time_bound("--since", *options.since, false);
    if (!since) return since.error();
    filter.since = *since;
  }
  if (options.until) {
    auto until = parse_time_bound("--until", *options.until, true);
    if (!until) return until.error();
    filter.until = *until;
  }
  for (const auto& text : options.settings) {
    auto setting = parse_setting(text);
    if (!setting) return setting.error();
    filter.settings.push_back(*setting);
  }
  for (const auto& text : options.tags) {
    const auto equals = text.find('=');
    if (equals == std::string::npos || equals == 0) return bad_value("--tag", text);
    filter.tags.emplace_back(text.substr(0, equals), text.substr(equals + 1));
  }
  return filter;
}

std::optional<base::Expected<RunFilter>> parse_filter_expression(const std::string& text) {
  std::vector<std::string> terms;
  const std::regex separator(R"(\s*;\s*|\s+and\s+)");
  for (std::sregex_token_iterator it(text.begin(), text.end(), separator, -1), end; it != end;
       ++it) {
    if (!it->str().empty()) terms.push_back(*it);
  }
  FilterOptions options;
  const std::map<std::string, std::optional<std::string>*> keys = {
      {"label", &options.label}, {"workload", &options.workload}, {"status", &options.status},
      {"host", &options.host},   {"since", &options.since},       {"until", &options.until}};
  for (const auto& term : terms) {
    const auto equals = term.find('=');
    if (equals == std::string::npos) return std::nullopt;
    const auto key = term.substr(0, equals);
    const auto value = term.substr(equals + 1);
    if (key.rfind("setting.", 0) == 0 && key.size() > 8) {
      options.settings.push_back(key.substr(8) + "=" + value);
    } else if (key.rfind("tag.", 0) == 0 && key.size() > 4) {
      options.tags.push_back(key.substr(4) + "=" + value);
    } else if (auto found = keys.find(key); found != keys.end()) {
      *found->second = value;
    } else {
      return std::nullopt;
    }
  }
  if (terms.empty()) return std::nullopt;
  return make_filter(options);
}

}  // namespace pgwaitprof::store
