// A profiled benchmark run: everything report.json holds, and the pure analyses made of it
// (stall detection). report.json is the source of truth every renderer reads.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.h"
#include "base/time.h"
#include "model/cpu_profile.h"
#include "model/latency_histogram.h"
#include "model/profile.h"
#include "model/sampler_source.h"

namespace pgwaitprof::model {

// 2 added outages and latency percentiles; 3 kernel times, lock blockers and statements; 4 the
// throughput's source, the server's tps per interval and the run's tags; 5 the source asked for
// and why the one used was chosen, and the sampler's kernel check; 7 the on-CPU profile; 8 the
// summary's CPU figures (summary.cpu); 10 (9 was the shapes of branches merged together, each
// with its own 9, never released as one) the running client backends per interval (running),
// the kernel check's like-with-like figures (summary.kernel_check: sampled_running_aas,
// exited_aas), a prepared transaction as a lock's blocker, the steady level a stall fell from,
// whose connection an outage was, and the traced source's parts of a profile (profile.traced:
// blocked, run-queue and on-CPU time, waits and their duration histogram per key); 11 the
// traced source's own counts (sampler.trace: switches, failed reads, full maps, lost charges);
// 12 the traced source's witness (sampler.trace.witness: its client backends' time against the
// kernel's); 13 the blocked time of a traced key's ended waits (profile.traced.ended_blocked_s:
// blocked_s without a wait still in progress, what the mean and the histogram's sum are of); 14
// pgwaitprof's own version (environment.pgwaitprof_version); 15 the host a run was sampled on
// over SSH (environment.sampler_host). Documents of older versions still load (their new
// fields take defaults).
inline constexpr int kReportSchemaVersion = 15;
inline constexpr int kOldestReadableSchemaVersion = 1;

// How a run ended. Mapped to a string only in the report.json codec and the renderers.
enum class RunStatus {
  kCompleted,    // the load generator finished its work and exited 0
  kInterrupted,  // a signal (Ctrl-C, SIGTERM, a client gone) stopped it; the report is partial
  kFailed,       // it could not start, the load generator failed, or the report could not be kept
};
std::string_view to_string(RunStatus status);
std::optional<RunStatus> parse_run_status(std::string_view text);

// One line of pgbench -P progress, or the load generator's equivalent.
struct LoadgenProgress {
  base::Seconds elapsed{0};  // since the load generator started (or epoch, see parser)
  double tps = 0;
  base::Milliseconds latency_avg{0};  // NaN when pgbench printed -nan (no transaction completed)
  base::Milliseconds latency_stddev{0};
  uint64_t failed = 0;
  std::optional<base::Milliseconds> lag;  // with -R
  uint64_t skipped = 0;
  // sysbench's: queries per second, and the latency at a percentile (--percentile, 95 by
  // default) instead of the average (latency_avg is NaN then).
  std::optional<double> qps;
  std::optional<base::Milliseconds> latency_at_percentile;
  double latency_percentile = 0;
};

// The load generator's final summary.
struct LoadgenSummary {
  std::string transaction_type;
  double scale = 0;
  std::string query_mode;
  int clients = 0;
  int threads = 0;
  std::optional<base::Seconds> duration;
  uint64_t transactions = 0;
  uint64_t failed = 0;
  base::Milliseconds latency_avg{0};
  std::optional<base::Milliseconds> latency_stddev;
  std::optional<base::Milliseconds> initial_connection_time;
  double tps = 0;
  std::vector<std::string> aborted;  // "client 3 aborted in command 4 ..." lines
  // sysbench's: queries per second, and its latency at a percentile over the run.
  std::optional<double> qps;
  std::optional<base::Milliseconds> latency_at_percentile;
  double latency_percentile = 0;
};

struct TimelineSlice {
  base::Seconds start{0};  // since the run started
  base::Seconds duration{0};
  Profile profile;
  std::optional<LoadgenProgress> loadgen;
  // Transactions (and pg_stat_statements calls) per second the server counted in the interval
  // (pg_stat_database), beside or instead of the load generator's own figures.
  std::optional<double> server_tps;
  std::optional<double> server_calls_per_s;
  // The server's figure holds part of a reading that covered more than half an interval (the
  // readings between were missed): a smear, not this interval's own.
  bool server_tps_spread = false;
  Background background;
  std::optional<HostCpu> cpu;
  bool sampler_outage = false;  // the sampler was disconnected during part of it
  // Percentiles of the transactions that ended in the interval (pgbench's per-transaction log).
  std::optional<LatencySummary> latency;
  // Seconds on a CPU and on the run queue per process group (KernelTimes' groups), from
  // /proc/<pid>/schedstat; empty when the server is not on this host.
  std::map<std::string, KernelTime> kernel;
  // Client backends sampled running, waiting or not (the memory source with a kernel view).
  RunningSamples running;
  // The lock wait that blocked the most backends in the interval, and who held it:
  // `Lock | relation "pgbench_accounts", blocked by pid 4242 (psql, idle in transaction 3.1 s):
  // LOCK TABLE pgbench_accounts`; "" when none was looked up.
  std::string lock_blocker;
  // The interval is (mostly) in the CHECKPOINT issued after the load (--checkpoint-after).
  bool checkpoint_after = false;
};

// What a fixed-work run (COPY jobs, pgbench -t) did: its headline is the elapsed time and the
// rate, not tps.
struct WorkDone {
  uint64_t rows = 0;            // rows loaded (COPY); 0 when not counted
  uint64_t bytes = 0;           // COPY data sent or read; 0 when not counted
  uint64_t transactions = 0;    // pgbench transactions (-t N x clients)
  base::Seconds elapsed{0};     // from the load's start to its last client's end
  std::string summary() const;  // "2000000 rows in 12.3 s: 162602 rows/s, 20.6 MB/s"
};

// The CHECKPOINT issued when the load ended (--checkpoint-after): how long it took and what
// was waited for meanwhile (the checkpointer's fsyncs, writes).
struct CheckpointAfter {
  base::Seconds start{0};  // since the run started
  base::Seconds duration{0};
  std::string error;  // "" when it succeeded
  Profile profile;    // of the timeline intervals marked checkpoint_after
};

// Backends blocked on one lock by one kind of blocker, over the run: (lock type, object,
// blocker's statement and state) with how often it was seen.
struct LockBlocker {
  std::string lock_type;
  std::string object;
  std::string blocker_statement;
  std::string blocker_state;
  std::string blocker_application;
  std::string blocker_backend_type;
  int32_t example_blocker_pid = 0;  // 0 for a prepared transaction
  std::string example_object;       // "transaction 7123" where `object` is generic
  // A prepared transaction held the lock (no backend: pid 0): its name (GID) and the role that
  // prepared it; max_xact_age is then the time since it was prepared. "" otherwise.
  std::string prepared;
  std::string prepared_by;
  int blockers = 1;  // distinct blocker pids seen
  base::Seconds max_xact_age{-1};
  int chain_depth = 1;              // 2 and more: the blocker was itself blocked
  uint64_t observations = 0;        // blocked backends seen in lookups
  std::string description() const;  // the stall's wording, without the wait
  // Who blocked: "pid 4242 (psql)", "3 backends (pgbench)", or "prepared transaction 'blk',
  // prepared 3.1 s ago, by alice".
  std::string who() const;
};

// One statement (query id) of the run: its samples, its waits, and pg_stat_statements' figures
// over the run when the extension is installed.
struct StatementProfile {
  int64_t query_id = 0;
  std::string text;      // literals replaced, at most 200 characters; "" when never fetched
  uint64_t samples = 0;  // non-idle samples with this query id
  std::map<std::string, uint64_t> waits;  // display name -> samples
  std::optional<uint64_t> calls;          // pg_stat_statements deltas
  std::optional<base::Milliseconds> mean_exec;
};

// A time the sampler could not sample the target during the run (e.g. the server restarted).
// Whose connection it was: the sampler's (no samples), or the run's own (its collectors': no
// server throughput and no background activity meanwhile).
inline constexpr const char* kSamplerConnection = "sampler";
inline constexpr const char* kRunConnection = "run";
struct Outage {
  base::Seconds start{0};  // since the run started
  base::Seconds duration{0};
  uint64_t missed_ticks = 0;
  std::string reason;                           // the error that took the connection down
  std::string connection = kSamplerConnection;  // kSamplerConnection or kRunConnection
  std::string summary() const;  // "12.3-15.8 s: sampler disconnected for 3.5 s (...)"
};

struct StallWait {
  std::string wait;     // display name, e.g. "Lock | relation"
  double backends = 0;  // average client backends on it during the stall
};

struct Stall {
  base::Seconds start{0};  // since the run started
  base::Seconds duration{0};
  double tps = 0;
  double median_tps = 0;  // the run's median
  // The level it fell from (steady_tps() in run_analysis.h); 0 when none was left (or the
  // report is older than schema 10, whose stalls were found against the median).
  double steady_tps = 0;
  double client_backends = 0;    // average active+idle-in-transaction client backends
  std::vector<StallWait> waits;  // most frequent first
  std::string background;        // flags seen during the stall
  std::string blocker;           // who blocked it, when Lock waits dominated it
  // Its worst transaction (pgbench's per-transaction log); NaN when the log was not kept.
  base::Milliseconds max_latency{std::numeric_limits<double>::quiet_NaN()};
  std::string summary() const;  // "250 s: 0 tps, 16/16 backends on Lock | relation (av ch)"
};

struct Setting {
  std::string name;
  std::string value;
  std::string unit;
  std::string source;
};

// The host of a remote sampler (run --sampler-host): the server's host as the pgwaitprof there
// described it, and its clock's offset from this host's, estimated over the SSH channel.
struct SamplerHost {
  std::string address;  // as given: ssh://[user@]host[:port]
  std::string hostname;
  std::string kernel;
  std::string cpu_model;
  int cpu_count = 0;
  uint64_t memory_bytes = 0;
  std::string program_version;  // of the pgwaitprof there
  double clock_offset_ms = 0;   // its clock minus this host's (midpoint of the fastest ping)
  double round_trip_ms = 0;     // the channel's fastest ping: the network round trip to it
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
  // The pgwaitprof that made the run: "0.1.0 (6a6e3daf2c1f)", its version and revision; "" in
  // reports written before schema 14.
  std::string pgwaitprof_version;
  // PostgreSQL 17+'s own description of the wait events the run saw (pg_wait_events), keyed
  // "type | name": preferred to pgwaitprof's in legends.
  std::map<std::string, std::string> wait_event_descriptions;
  // A run whose sampler ran on the server's host (the fields above are then this host's, the
  // load generator's).
  std::optional<SamplerHost> sampler_host;
};

struct SamplerInfo {
  SamplerSource source = SamplerSource::kActivity;  // the one used (never auto)
  SamplerSource requested = SamplerSource::kActivity;
  // Why `source` was used where the choice was pgwaitprof's (auto): "local server, read as
  // root", "the server is on another host", the memory source's refusal; "" when named.
  std::string source_reason;
  double hz = 0;            // configured
  base::Seconds period{0};  // of pg_wait_sampling's own sampling, when that is the source
  double achieved_hz = 0;
  uint64_t snapshots = 0;
  uint64_t missed_ticks = 0;
  base::Milliseconds snapshot_p99{0};
  int hidden_backends = 0;
  std::optional<TraceCounts> trace;  // the traced source's counts; none for the others
};

// Where a repeat of the run should land, from the spread of the same figures over earlier
// comparable runs in the data directory (history/run_to_run.h says which runs are comparable).
// A run's own errors are within-run: they cannot see what changes from one run to the next
// (pages cached, where the scheduler puts the clients, the checkpoints a run meets), which on
// a shared machine is often many times larger.
struct RunToRunFigure {
  std::string name;  // "tps" or a wait event's display name (its share of non-idle samples)
  double value = 0;  // this run's steady-state figure
  double sd = 0;     // standard deviation of the figure between the comparable runs
  // t(runs - 1) x sqrt(2) x sd: a repeat differs from this run by less with 95 % confidence
  // (both carry the run-to-run noise).
  double half_width = 0;
};

struct RunToRun {
  size_t runs = 0;    // comparable earlier runs used (the newest ones, at most 10)
  size_t needed = 0;  // how many an estimate needs; figures is empty with fewer
  std::vector<RunToRunFigure> figures;  // tps first, then the run's largest wait events
};

struct Run {
  int schema_version = kReportSchemaVersion;
  std::string id;
  std::string label;
  // What the load was, as the user tagged it (--tag KEY=VALUE): "loadgen=benchbase",
  // "client_host=bench-2". Shown in every report and filtered on by `runs --tag`.
  std::map<std::string, std::string> tags;
  std::string target;  // connection string with the password masked
  std::string workload;
  std::string variant;  // matrix variant name ("" outside a matrix)
  int repeat = 0;       // matrix repeat number, from 1 ("" and 0 outside a matrix)
  int clients = 0;      // load generator clients (pgbench -c)
  std::vector<std::string> loadgen_argv;
  // Where the timeline's tps and the summary's come from: the load generator's own reports
  // ("pgbench", "sysbench") or the server's counters ("server": pg_stat_database, for a command
  // or a recording window). "" in reports written before it was recorded: pgbench.
  std::string throughput_source;
  RunStatus status = RunStatus::kCompleted;
  std::string error;       // one line, when not completed
  std::string started_at;  // ISO 8601 UTC
  std::string ended_at;
  base::Seconds duration{0};
  base::Seconds interval{1};
  SamplerInfo sampler;
  Profile profile;
  std::map<int64_t, uint64_t> query_ids;     // non-idle samples per query id
  std::vector<StatementProfile> statements;  // by samples, largest first
  std::string statements_note;  // why statements are missing (compute_query_id off), or ""
  std::vector<LockBlocker> lock_blockers;  // by observations, largest first
  uint64_t lock_lookups = 0;               // lookups made while Lock waits existed
  // Totals of the timeline's kernel times per group; empty when not measured.
  std::map<std::string, KernelTime> kernel;
  std::vector<TimelineSlice> timeline;
  std::vector<Stall> stalls;
  std::vector<Outage> outages;
  Environment environment;
  std::optional<LoadgenSummary> loadgen;
  // Latency percentiles of the whole run from pgbench's per-transaction log, when it was kept.
  std::optional<LatencySummary> latency;
  double latency_sampling_rate = 1;  // pgbench --sampling-rate: counts are of logged ones
  int loadgen_exit_code = 0;
  std::string loadgen_stderr;  // tail of it, when the load generator failed
  std::vector<std::string> warnings;
  std::optional<WorkDone> work;                     // fixed-work runs only
  std::optional<CheckpointAfter> checkpoint_after;  // --checkpoint-after only
  std::optional<CpuProfile> cpu_profile;            // --cpu-profile only
  // From the data directory's history when the run was written; none for a run written
  // outside a data directory.
  std::optional<RunToRun> run_to_run;
};

// A tag of --tag: KEY=VALUE, KEY of letters, digits, '_', '.' and '-' (at most 64), VALUE at
// most 200 bytes (escaped where shown). The error says what is wrong ("expected KEY=VALUE").
inline constexpr size_t kMaxTags = 32;
base::Expected<std::pair<std::string, std::string>> parse_tag(std::string_view text);
// "client_host=bench-2, loadgen=benchbase"; "" without tags.
std::string tags_text(const std::map<std::string, std::string>& tags);

// What a report says of the run's throughput: "pgbench's progress reports (-P)", "the server's
// pg_stat_database (xact_commit + xact_rollback per second)", ...
std::string throughput_source_text(const Run& run);

// The figure a matrix cell or a comparison is made of: tps (higher is better), or a fixed-work
// run's elapsed seconds (lower is better).
enum class Metric { kTps, kDuration };
std::string_view to_string(Metric metric);
std::optional<Metric> parse_metric(std::string_view text);
// The run's figure for `metric`; nullopt when the run has none (no pgbench summary, no work).
std::optional<double> run_figure(const Run& run, Metric metric);

// The report.json codec. run_from_json rejects documents of a schema version it cannot read.
nlohmann::json to_json(const Run& run);
Run run_from_json(const nlohmann::json& json);

void to_json(nlohmann::json& json, const Profile& profile);
Profile profile_from_json(const nlohmann::json& json);

}  // namespace pgwaitprof::model
