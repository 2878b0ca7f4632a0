// How a run report is rendered (the options of `report`, `run` and `record`), shared by the
// report's renderers (report_render.h) and their common parts (report_common.h).
#pragma once

namespace pgwaitprof::exporters {

enum class GroupBy { kWaitEvent, kBackendType, kState, kWaitEventType, kQueryId };

struct RenderOptions {
  GroupBy by = GroupBy::kWaitEvent;
  int top = 20;               // rows of the profile table (and query ids); the rest is "other"
  bool include_idle = false;  // idle sessions counted in shares
  bool trim = true;           // leave the warm-up MSER-5 finds out of the summary (--no-trim)
};

}  // namespace pgwaitprof::exporters
