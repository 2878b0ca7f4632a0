// Time in types: a duration in (fractional) seconds, the one type of the timeline interval and
// of every period the model measures. Seconds as a bare double appear only at the edges
// (report.json, the control protocol, the CLI, text).
#pragma once

#include <chrono>

namespace pgwaitprof::base {

using Seconds = std::chrono::duration<double>;

}  // namespace pgwaitprof::base
