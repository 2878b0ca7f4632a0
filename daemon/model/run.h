// A profiled benchmark run: everything report.json holds, and the pure analyses made of it
// (stall detection). report.json is the source of truth every renderer reads.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "daemon/model/profile.h"

namespace pgwaitprof::model {

inline constexpr int kReportSchemaVersion = 1;

// One line of pgbench -P progress, or the load generator's equivalent.
struct LoadgenProgress {
  double elapsed_s = 0;      // seconds since the load generator started (or epoch, see parser)
  double tps = 0;
  double latency_avg_ms = 0;  // NaN when pgbench printed -nan (no transaction completed)
  double latency_stddev_ms = 0;
  uint64_t failed = 0;
  std::optional<double> lag_ms;  // with -R
  uint64_t skipped = 0;
};

// The load generator's final summary.
struct LoadgenSummary {
  std::string transaction_type;
  double scale = 0;
  std::string query_mode;
  int clients = 0;
  int threads = 0;
  std::optional<double> duration_s;
  uint64_t transactions = 0;
  uint64_t failed = 0;
  double latency_avg_ms = 0;
  std::optional<double> latency_stddev_ms;
  std::optional<double> initial_connection_time_ms;
  double tps = 0;
  std::vector<std::string> aborted;  // "client 3 aborted in command 4 ..." lines
};

struct HostCpu {
  double user_pct = 0;
  double system_pct = 0;
  double iowait_pct = 0;
  double idle_pct = 0;
  double loadgen_cores = 0;  // CPU time of the load generator's threads / interval (in cores)
};

// Background activity seen during an interval.
struct Background {
  bool autovacuum = false;     // an autovacuum worker was present ("av")
  bool checkpoint = false;     // the checkpointer was not sleeping in its main loop ("ch")
  bool manual_vacuum = false;  // a client backend ran VACUUM ("vac")
  std::string flags() const;   // "av ch vac" style, empty when nothing ran
};

struct TimelineSlice {
  double start_s = 0;  // since the run started
  double duration_s = 0;
  Profile profile;
  std::optional<LoadgenProgress> loadgen;
  Background background;
  std::optional<HostCpu> cpu;
};

struct StallWait {
  std::string wait;  // display name, e.g. "Lock | relation"
  double backends = 0;  // average client backends on it during the stall
};

struct Stall {
  double start_s = 0;
  double duration_s = 0;
  double tps = 0;
  double median_tps = 0;
  double client_backends = 0;     // average active+idle-in-transaction client backends
  std::vector<StallWait> waits;   // most frequent first
  std::string background;         // flags seen during the stall
  std::string summary() const;    // "250 s: 0 tps, 16/16 backends on Lock | relation (av ch)"
};

struct Setting {
  std::string name;
  std::string value;
  std::string unit;
  std::string source;
};

struct Environment {
  std::string server_version;
  int server_version_num = 0;
  std::vector<Setting> settings;  // non-default ones
  std::optional<bool> data_checksums;
  std::string kernel;
  std::string cpu_model;
  int cpu_count = 0;
  uint64_t memory_bytes = 0;
  std::string hostname;
};

struct SamplerInfo {
  std::string source = "activity";  // activity | pg_wait_sampling
  double hz = 0;                    // configured
  double period_s = 0;              // of pg_wait_sampling's own sampling, when that is the source
  double achieved_hz = 0;
  uint64_t snapshots = 0;
  uint64_t missed_ticks = 0;
  double snapshot_p99_ms = 0;
  int hidden_backends = 0;
};

struct Run {
  int schema_version = kReportSchemaVersion;
  std::string id;
  std::string label;
  std::string target;  // connection string with the password masked
  std::string workload;
  std::string variant;  // matrix variant name ("" outside a matrix)
  int repeat = 0;       // matrix repeat number, from 1 ("" and 0 outside a matrix)
  int clients = 0;      // load generator clients (pgbench -c)
  std::vector<std::string> loadgen_argv;
  std::string status = "completed";  // completed | interrupted | failed
  std::string error;                 // one line, when not completed
  std::string started_at;            // ISO 8601 UTC
  std::string ended_at;
  double duration_s = 0;
  double interval_s = 1;
  SamplerInfo sampler;
  Profile profile;
  std::map<int64_t, uint64_t> query_ids;  // non-idle samples per query id
  std::vector<TimelineSlice> timeline;
  std::vector<Stall> stalls;
  Environment environment;
  std::optional<LoadgenSummary> loadgen;
  int loadgen_exit_code = 0;
  std::string loadgen_stderr;  // tail of it, when the load generator failed
  std::vector<std::string> warnings;
};

// Intervals whose tps is below `fraction` of the run's median tps, with what the client
// backends waited on; consecutive stalled intervals are merged.
std::vector<Stall> detect_stalls(const std::vector<TimelineSlice>& timeline, double fraction = 0.2);

// The report.json codec. from_json rejects documents of another schema version.
nlohmann::json to_json(const Run& run);
Run run_from_json(const nlohmann::json& json);

void to_json(nlohmann::json& json, const Profile& profile);
Profile profile_from_json(const nlohmann::json& json);

}  // namespace pgwaitprof::model
