// Parses pgbench's output: -P progress lines (PG 13-17 formats, --progress-timestamp too) and
// the final summary. Pure functions on strings; the run orchestrator feeds them lines.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "model/run.h"

namespace pgwaitprof::loadgen {

class PgbenchParseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A progress line ("progress: 5.0 s, 1234.5 tps, lat 0.810 ms stddev 0.301, 0 failed" and its
// variants) or nullopt for any other line. With --progress-timestamp, elapsed is the Unix
// time pgbench printed. "-nan" latencies become NaN. Never throws.
std::optional<model::LoadgenProgress> parse_progress_line(std::string_view line);

// The summary pgbench prints at the end (stdout). Throws PgbenchParseError with a one-line
// message when the text has no summary (e.g. pgbench failed before it ran).
model::LoadgenSummary parse_summary(std::string_view output);

// "client 3 aborted in command 4 (SQL) of script 0; ..." lines of stderr.
std::vector<std::string> aborted_clients(std::string_view stderr_text);

}  // namespace pgwaitprof::loadgen
