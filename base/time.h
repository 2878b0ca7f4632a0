// Time in types: a duration in (fractional) seconds, the one type of the timeline interval and
// of every period the model measures, and fractional milliseconds for latencies (what pgbench,
// sysbench and pg_stat_statements print, kept as read so that report.json's figures round-trip
// to the same digits). Both hold NaN ("no transaction completed").
//
// The rule in model/: a duration is a base::Seconds or base::Milliseconds (or a std::chrono
// integer duration where the source counts whole ticks), and its name carries no unit suffix:
// the type says it (`base::Milliseconds latency_avg`, not `double latency_avg_ms`). Numbers with
// units appear only at the edges (report.json and the other codecs, the control protocol, the
// CLI, text, the load generators' output and /proc readers), converted where they are read or
// written with a constructor or .count(); JSON keys keep their unit suffixes ("latency_avg_ms").
#pragma once

#include <chrono>

namespace pgwaitprof::base {

using Seconds = std::chrono::duration<double>;
using Milliseconds = std::chrono::duration<double, std::milli>;

}  // namespace pgwaitprof::base
