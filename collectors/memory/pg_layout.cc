// The generated layouts (pg_layouts.inc, written by CMake from generate_layout.py's tables).
#include "collectors/memory/pg_layout.h"

#include <algorithm>

namespace pgwaitprof::collectors::memory {

const std::vector<PgLayout>& pg_layouts() {
  static const std::vector<PgLayout> layouts = {
#include "pg_layouts.inc"
  };
  return layouts;
}

ByteRange proc_identity(const PgLayout& layout) {
  const size_t first = std::min({layout.proc_pid, layout.proc_backend_id, layout.proc_latch_owner});
  const size_t last = std::max({layout.proc_pid, layout.proc_backend_id, layout.proc_latch_owner});
  return {first, last + sizeof(int32_t) - first};
}

const PgLayout* find_pg_layout(int major) {
  for (const auto& layout : pg_layouts()) {
    if (layout.major == major) return &layout;
  }
  return nullptr;
}

}  // namespace pgwaitprof::collectors::memory
