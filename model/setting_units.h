// PostgreSQL's units of memory and time settings, as pg_settings.unit names them and
// postgresql.conf values carry them: the one table both the settings a matrix applies (which
// converts a user's value into the parameter's unit) and the reports (which show a value as
// SHOW would) read.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace pgwaitprof::model {

struct SettingUnit {
  std::string name;
  double factor = 1;   // in the base unit of its kind: bytes, or milliseconds
  bool memory = true;  // bytes; false: time
};

// "kB", "MB", "ms", "min", ... and the block-sized units pg_settings shows ("8kB", "16MB": a
// count of a unit); nullopt for anything else (case matters, as for PostgreSQL).
std::optional<SettingUnit> find_setting_unit(std::string_view name);

// `value` in `unit` as SHOW writes it: the largest unit of its kind that divides it exactly
// ("128MB" for 16384 of "8kB"); "" when the value is not a positive number, has no unit, or
// would be shown as it is given.
std::string show_setting_value(std::string_view value, std::string_view unit);

}  // namespace pgwaitprof::model
