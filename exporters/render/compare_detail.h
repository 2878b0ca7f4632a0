// The parts of a comparison's rendering (compare.h) that have a file of their own: the traced
// waits' table and JSON (compare_traced.cc), beside compare_render.cc's other tables.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/compare_types.h"

namespace pgwaitprof::exporters::compare_detail {

// A table's rows (the first the header), unescaped, and which columns align right.
struct CompareTable {
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> right;
};

// The waits of traced runs whose count, time or p99 duration moved (comparison.traced_waits);
// no rows without them. `variant_column` when the cells' variants differ.
CompareTable traced_waits_table(const model::Comparison& comparison, bool variant_column);
// Its title, and the note on what is exact and where the spread comes from.
std::string traced_waits_title();
std::string traced_waits_note();
// compare JSON's "traced_waits".
nlohmann::json traced_waits_json(const model::Comparison& comparison);

}  // namespace pgwaitprof::exporters::compare_detail
