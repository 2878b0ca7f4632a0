// Reads pgbench's per-transaction logs (-l, PG 13-17 formats) into per-interval and per-run
// latency percentiles. Parsing is pure (one line, one file name, an argument list); the reader
// streams every thread's file at once in end-time order, so memory is a few histograms and one
// small buffer per file, whatever the number of transactions or the length of the run.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "model/latency_histogram.h"

namespace pgwaitprof::loadgen {

// The optional trailing columns of a log line. They cannot be told apart from the line alone
// (a 7th field is the lag with --rate, the retries with --max-tries), so the caller says which
// the run has: see log_args_of.
struct LogColumns {
  bool schedule_lag = false;  // --rate (-R)
  bool retries = false;       // --max-tries other than 1 (PG 15+)
};

enum class TransactionStatus { completed, failed, skipped };
// Why a failed transaction failed: pgbench says it only with --failures-detailed.
enum class FailureCause { none, unspecified, serialization, deadlock, other };

// One line of the log:
//   client_id transaction_no time script_no time_epoch time_us [schedule_lag] [retries]
// where time is the latency in microseconds, or "skipped", or "failed" (without
// --failures-detailed) or "serialization" / "deadlock" (with it, PG 15+; "other" appears in
// later versions with --continue-on-error).
struct LoggedTransaction {
  int client = 0;
  std::int64_t transaction_no = 0;
  int script = 0;  // 0-based, unlike the summary on stdout
  TransactionStatus status = TransactionStatus::completed;
  FailureCause cause = FailureCause::none;
  // From the scheduled start to the end: with --rate it includes the schedule lag, as
  // pgbench's own "latency average" does. Zero unless completed.
  std::chrono::microseconds latency{0};
  // time_epoch.time_us: the wall-clock time at which pgbench logged the transaction, right
  // after it ended (the docs: "when the transaction completed"; doLog() takes the time after
  // the latency is computed). For a skipped transaction, when pgbench gave up on it.
  std::chrono::sys_time<std::chrono::microseconds> end{};
  std::optional<std::chrono::microseconds> schedule_lag;  // with --rate (0 unless completed)
  std::optional<std::uint32_t> retries;                   // with --max-tries other than 1
};

// One line (with or without its '\n' or "\r\n") or nullopt for anything else, including a line
// with more or fewer fields than columns says. Never throws.
std::optional<LoggedTransaction> parse_log_line(std::string_view line, LogColumns columns);

// What pgbench's arguments say about its per-transaction log. Long options must be spelled in
// full (pgbench also takes unambiguous abbreviations, which are not recognised here).
struct PgbenchLogArgs {
  bool logging = false;                   // -l / --log (also bundled, as in -nl)
  std::optional<std::string> log_prefix;  // --log-prefix; pgbench's default is "pgbench_log"
  bool aggregated = false;                // --aggregate-interval: the log has no transactions
  LogColumns columns;
  double sampling_rate = 1.0;  // --sampling-rate
};
PgbenchLogArgs log_args_of(const std::vector<std::string>& pgbench_args);

// pgbench names its logs <prefix>.<pid> (thread 0) and <prefix>.<pid>.<thread> (threads 1..j-1).
struct PgbenchLogFileName {
  int pid = 0;
  int thread = 0;
};
// The pid and thread of file_name (a bare name, no directory) if it is a log of prefix_name
// (the last component of the prefix, e.g. "pgbench_log").
std::optional<PgbenchLogFileName> parse_log_file_name(std::string_view prefix_name,
                                                      std::string_view file_name);

struct PgbenchLogFile {
  std::filesystem::path path;
  int pid = 0;
  int thread = 0;
};
// The log files of prefix (e.g. "<run dir>/pgbench_log"), sorted by pid then thread. A run
// directory holds one pgbench process's files; with several pids, the caller picks one. Sets
// error (and returns what it found) when the directory cannot be read.
std::vector<PgbenchLogFile> list_log_files(const std::filesystem::path& prefix,
                                           std::error_code& error);
std::vector<std::filesystem::path> paths_of(const std::vector<PgbenchLogFile>& files);

struct LatencyTimelineOptions {
  std::chrono::system_clock::time_point start;  // interval 0 begins here (the run's start)
  std::chrono::microseconds interval{std::chrono::seconds(1)};  // must be positive
  LogColumns columns;
  double sampling_rate = 1.0;  // recorded in the timeline, never used to scale
  // Transactions ending this many intervals or more after start are counted in the run only:
  // a wrong timestamp must not allocate a week of empty intervals.
  std::size_t max_intervals = std::size_t{7} * 24 * 3600;
  std::size_t buffer_bytes = std::size_t{64} * 1024;  // per file
};

// Streams the files (all threads of one pgbench run) and returns the latency summaries per
// interval (by transaction end time) and for the run. Unreadable files are listed in
// errors; unparsable lines are counted. Throws std::invalid_argument for a non-positive
// interval only.
model::LatencyTimeline read_latency_timeline(const std::vector<std::filesystem::path>& files,
                                             const LatencyTimelineOptions& options);

}  // namespace pgwaitprof::loadgen
