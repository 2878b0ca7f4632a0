// sysbench's output (1.0): its per-interval reports (--report-interval) and its final summary,
// as the model's load-generator progress and summary. Pure functions on strings, tested in
// tests/loadgen/sysbench_parser_test.cc on sysbench's real output.
#pragma once

#include <optional>
#include <string_view>

#include "model/run.h"

namespace pgwaitprof::loadgen {

// "[ 3s ] thds: 4 tps: 512.95 qps: 10262.94 (r/w/o: 7183.66/2052.39/1026.89) lat (ms,95%):
// 11.45 err/s: 0.00 reconn/s: 0.00": elapsed 3 s, tps, qps, the latency percentile, and the
// errors of the interval (err/s x interval). nullopt for any other line.
std::optional<model::LoadgenProgress> parse_sysbench_progress(std::string_view line,
                                                              double interval_s);

// The summary at the end of `sysbench ... run` ("SQL statistics:", "transactions: 994 (99.18
// per sec.)", "Latency (ms): avg: ... 95th percentile: ..."); nullopt when the output has none
// (prepare, cleanup, a failed run). `test` names the transaction type ("oltp_read_write").
std::optional<model::LoadgenSummary> parse_sysbench_summary(std::string_view output,
                                                            std::string_view test);

}  // namespace pgwaitprof::loadgen
