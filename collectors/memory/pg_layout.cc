// The generated layouts (layouts/pgNN.inc, written by deploy/generate-layouts.sh).
#include "collectors/memory/pg_layout.h"

#include <algorithm>

namespace pgwaitprof::collectors::memory {

const std::vector<PgLayout>& pg_layouts() {
  static const std::vector<PgLayout> layouts = {
#include "collectors/memory/layouts/pg13.inc"
#include "collectors/memory/layouts/pg14.inc"
#include "collectors/memory/layouts/pg15.inc"
#include "collectors/memory/layouts/pg16.inc"
#include "collectors/memory/layouts/pg17.inc"
#include "collectors/memory/layouts/pg18.inc"
#include "collectors/memory/layouts/pg19.inc"
  };
  return layouts;
}

ByteRange proc_identity(const PgLayout& layout) {
  size_t first = std::min(layout.proc_pid, layout.proc_latch_owner);
  size_t last = std::max(layout.proc_pid, layout.proc_latch_owner);
  if (!layout.status_by_proc_number) {
    first = std::min(first, layout.proc_backend_id);
    last = std::max(last, layout.proc_backend_id);
  }
  return {first, last + sizeof(int32_t) - first};
}

const PgLayout* find_pg_layout(int major) {
  for (const auto& layout : pg_layouts()) {
    if (layout.major == major) return &layout;
  }
  return nullptr;
}

}  // namespace pgwaitprof::collectors::memory
