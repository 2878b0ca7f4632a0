// How a run report is rendered (the options of `report`, `run` and `record`): the summary's
// options (model/summary.h), which say how the profile table groups and cuts its rows.
#pragma once

#include "model/summary.h"

namespace pgwaitprof::exporters {

using GroupBy = model::GroupBy;
using RenderOptions = model::SummaryOptions;

}  // namespace pgwaitprof::exporters
