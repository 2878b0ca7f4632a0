// One line of the run history: the figures `runs`, `trend` and the results database show of a
// run, taken from its report.json (the source of truth) and kept in the data directory's index
// so that listing thousands of runs never parses thousands of reports.
#pragma once

#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "model/run.h"

namespace pgwaitprof::store {

struct RunSummary {
  std::string id;
  std::string dir;     // the run directory
  std::string matrix;  // the matrix directory's name when the run belongs to one, else ""
  std::string label;
  std::map<std::string, std::string> tags;  // --tag KEY=VALUE
  std::string started_at;                   // ISO 8601 UTC, as in report.json
  std::string status;                       // completed, interrupted or failed
  std::string error;
  std::string workload;
  std::string variant;
  int clients = 0;
  double duration_s = 0;
  double tps = 0;             // steady-state tps (run_estimates), else the load generator's
  double tps_half_width = 0;  // of its 95 % CI; NaN when the report states none (run too short)
  // The load generator's own whole-run figure (pgbench's "tps = ..."); NaN when it gave none.
  double whole_run_tps = std::numeric_limits<double>::quiet_NaN();
  double latency_ms = 0;  // the load generator's average latency; NaN when none
  // The 99th percentile of the transaction log's latencies; NaN without a transaction log.
  double p99_ms = std::numeric_limits<double>::quiet_NaN();
  double aas = 0;        // non-idle samples per snapshot
  std::string top_wait;  // the most sampled non-idle wait (display name)
  // Share of the non-idle samples of the steady state, per non-idle wait (display name).
  std::map<std::string, double> wait_shares;
  // The load generator's command with the run's own paths left out (its transaction log
  // prefix, files in its run directory by name): equal for repeats of one configuration.
  std::string command;
  std::map<std::string, double> class_aas;  // AAS per wait class (CPU, LWLock, IO, ...)
  std::string host;
  std::string server_version;  // "PostgreSQL 16.3"
  int server_version_num = 0;
  std::string kernel;
  std::map<std::string, std::string> settings;  // the run's recorded non-default settings
  // The pgwaitprof that made the run ("0.1.0 (6a6e3daf2c1f)"); "" when unknown: a report of
  // schema 13 or older, a summary of version 5 or older.
  std::string pgwaitprof_version;
  long long report_mtime_ns = 0;  // of report.json, to find stale index entries
};

// The version of the summary's fields and of how summarize() computes them, kept beside each
// stored summary (the index, the results database): one of another version is made again from
// its report. 2: tps_half_width only where the report states one; 3: wait_shares and command;
// 4: whole_run_tps; 5: p99_ms; 6: pgwaitprof_version.
inline constexpr int kSummaryVersion = 6;

// The history's order, the data directory's and the results database's alike: newest first
// (by started_at, then id).
bool newer_first(const RunSummary& a, const RunSummary& b);

// The matrix directory's name of a run directory <data_dir>/matrix/NAME/runs/ID, else "".
std::string matrix_of_dir(const std::filesystem::path& run_dir);

// The data directory a run directory belongs to: <data_dir>/runs/ID or
// <data_dir>/matrix/NAME/runs/ID; nullopt for a run directory elsewhere.
std::optional<std::filesystem::path> data_dir_of(const std::filesystem::path& run_dir);

// The summary of a run read from `dir`.
RunSummary summarize(const model::Run& run, const std::filesystem::path& dir);

// "PostgreSQL 16.3 (Debian ...) on x86_64..." -> "PostgreSQL 16.3".
std::string short_server_version(const std::string& version);

nlohmann::json to_json(const RunSummary& summary);
RunSummary summary_from_json(const nlohmann::json& json);

}  // namespace pgwaitprof::store
