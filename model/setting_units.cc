// The units of PostgreSQL's memory and time settings (setting_units.h).
#include "model/setting_units.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <span>
#include <string>

namespace pgwaitprof::model {
namespace {

struct UnitEntry {
  std::string_view name;
  double factor;
  bool memory;
};

constexpr UnitEntry kUnits[] = {
    {"B", 1, true},           {"kB", 1024, true},          {"MB", 1048576, true},
    {"GB", 1073741824, true}, {"TB", 1099511627776, true}, {"us", 0.001, false},
    {"ms", 1, false},         {"s", 1000, false},          {"min", 60000, false},
    {"h", 3600000, false},    {"d", 86400000, false}};

// The units SHOW writes, largest first (not "us": SHOW never shows microseconds).
constexpr UnitEntry kShownSizes[] = {{"TB", 1099511627776.0, true},
                                     {"GB", 1073741824.0, true},
                                     {"MB", 1048576.0, true},
                                     {"kB", 1024.0, true},
                                     {"B", 1, true}};
constexpr UnitEntry kShownTimes[] = {{"d", 86400000, false},
                                     {"h", 3600000, false},
                                     {"min", 60000, false},
                                     {"s", 1000, false},
                                     {"ms", 1, false}};

}  // namespace

std::optional<SettingUnit> find_setting_unit(std::string_view name) {
  for (const auto& unit : kUnits) {
    if (unit.name == name) return SettingUnit{std::string(unit.name), unit.factor, unit.memory};
  }
  // pg_settings shows block-sized units as "8kB", "16MB".
  if (!name.empty() && std::isdigit(static_cast<unsigned char>(name.front()))) {
    double count = 0;
    const auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), count);
    if (error == std::errc()) {
      if (auto base = find_setting_unit(name.substr(static_cast<size_t>(end - name.data())))) {
        return SettingUnit{std::string(name), base->factor * count, base->memory};
      }
    }
  }
  return std::nullopt;
}

std::string show_setting_value(std::string_view value, std::string_view unit_name) {
  double number = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  // Enum, string and boolean settings have no unit to convert; -1 means "disabled" for most.
  if (error != std::errc() || end != value.data() + value.size() || !(number > 0)) return "";
  const auto unit = find_setting_unit(unit_name);
  if (!unit) return "";
  const double base = number * unit->factor;
  for (const auto& candidate : unit->memory ? std::span(kShownSizes) : std::span(kShownTimes)) {
    const double scaled = base / candidate.factor;
    if (scaled >= 1 && std::fabs(scaled - std::round(scaled)) < 1e-9) {
      std::string shown = fmt::format("{:.0f}{}", scaled, candidate.name);
      return shown == std::string(value) + std::string(unit_name) ? "" : shown;
    }
  }
  return "";
}

}  // namespace pgwaitprof::model
