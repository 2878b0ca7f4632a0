// One part of a matrix cell's wait profile (a wait class or a wait event, its share and AAS
// with their errors): shared by the matrix aggregation (model/matrix_aggregate.h), which
// computes it, and the scalability analysis (model/scalability.h), which compares it across the
// knee; its own header so that neither of the two includes the other for it.
#pragma once

#include <string>

namespace pgwaitprof::model {

// A wait class or a wait event, with its share of the non-idle samples and its average active
// sessions, each the mean over the cell's completed runs with its standard error (see
// MatrixCell::error_source).
struct WaitShare {
  std::string name;        // "LWLock", or "LWLock | XactSLRU" (display name, states merged)
  std::string wait_class;  // wait_event_type, for colours
  double share = 0;        // 0..1
  double share_error = 0;
  double aas = 0;
  double aas_error = 0;
};

}  // namespace pgwaitprof::model
