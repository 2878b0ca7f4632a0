// The generated layouts (pg_layouts.inc, written by CMake from generate_layout.py's tables).
#include "collectors/memory/pg_layout.h"

namespace pgwaitprof::collectors::memory {

const std::vector<PgLayout>& pg_layouts() {
  static const std::vector<PgLayout> layouts = {
#include "pg_layouts.inc"
  };
  return layouts;
}

const PgLayout* find_pg_layout(int major) {
  for (const auto& layout : pg_layouts()) {
    if (layout.major == major) return &layout;
  }
  return nullptr;
}

}  // namespace pgwaitprof::collectors::memory
