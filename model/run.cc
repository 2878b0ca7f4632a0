// The report.json codec of a run (its words and names are run_text.cc).
#include "model/run.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "model/json_optional.h"
#include "model/profile_json.h"

namespace pgwaitprof::model {

using nlohmann::json;

// NaN (pgbench's "-nan" latency of an interval without transactions) is stored as null.
static json number_or_null(double value) {
  return std::isfinite(value) ? json(value) : json(nullptr);
}
static double number_or_nan(const json& json_value) {
  return json_value.is_null() ? std::numeric_limits<double>::quiet_NaN() : json_value.get<double>();
}
// A duration stored in seconds under `key`; 0 when absent (documents of older versions).
static base::Seconds seconds_in(const json& j, const char* key) {
  return base::Seconds(j.value(key, 0.0));
}

// An optional duration as its count in the unit its key names; null when absent.
template <typename Duration>
static json count_or_null(const std::optional<Duration>& value) {
  return value ? json(value->count()) : json(nullptr);
}
template <typename Duration>
static std::optional<Duration> optional_in(const json& j, const char* key) {
  const auto value = j.value(key, std::optional<double>{});
  return value ? std::optional<Duration>(*value) : std::nullopt;
}

static void to_json(json& j, const LoadgenSummary& summary) {
  j = {{"transaction_type", summary.transaction_type},
       {"scale", summary.scale},
       {"query_mode", summary.query_mode},
       {"clients", summary.clients},
       {"threads", summary.threads},
       {"duration_s", count_or_null(summary.duration)},
       {"transactions", summary.transactions},
       {"failed", summary.failed},
       {"latency_avg_ms", summary.latency_avg.count()},
       {"latency_stddev_ms", count_or_null(summary.latency_stddev)},
       {"initial_connection_time_ms", count_or_null(summary.initial_connection_time)},
       {"tps", summary.tps},
       {"aborted", summary.aborted}};
}

static void from_json(const json& j, LoadgenSummary& summary) {
  summary.transaction_type = j.value("transaction_type", "");
  summary.scale = j.value("scale", 0.0);
  summary.query_mode = j.value("query_mode", "");
  summary.clients = j.value("clients", 0);
  summary.threads = j.value("threads", 0);
  summary.duration = optional_in<base::Seconds>(j, "duration_s");
  summary.transactions = j.value("transactions", uint64_t{0});
  summary.failed = j.value("failed", uint64_t{0});
  summary.latency_avg = base::Milliseconds(j.value("latency_avg_ms", 0.0));
  summary.latency_stddev = optional_in<base::Milliseconds>(j, "latency_stddev_ms");
  summary.initial_connection_time =
      optional_in<base::Milliseconds>(j, "initial_connection_time_ms");
  summary.tps = j.value("tps", 0.0);
  summary.aborted = j.value("aborted", std::vector<std::string>{});
}
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(HostCpu, user_pct, system_pct, iowait_pct, idle_pct,
                                                loadgen_cores)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Background, autovacuum, checkpoint, manual_vacuum)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(StallWait, wait, backends)
static void to_json(json& j, const Stall& stall) {
  j = {{"start_s", stall.start.count()},
       {"duration_s", stall.duration.count()},
       {"tps", stall.tps},
       {"median_tps", stall.median_tps},
       {"steady_tps", stall.steady_tps},
       {"client_backends", stall.client_backends},
       {"waits", stall.waits},
       {"background", stall.background},
       {"blocker", stall.blocker},
       {"max_latency_ms", number_or_null(stall.max_latency.count())}};
}

static void from_json(const json& j, Stall& stall) {
  stall.start = seconds_in(j, "start_s");
  stall.duration = seconds_in(j, "duration_s");
  stall.tps = j.value("tps", 0.0);
  stall.median_tps = j.value("median_tps", 0.0);
  stall.steady_tps = j.value("steady_tps", 0.0);
  stall.client_backends = j.value("client_backends", 0.0);
  stall.waits = j.value("waits", std::vector<StallWait>{});
  stall.background = j.value("background", "");
  stall.blocker = j.value("blocker", "");
  stall.max_latency =
      base::Milliseconds(j.contains("max_latency_ms") ? number_or_nan(j.at("max_latency_ms"))
                                                      : std::numeric_limits<double>::quiet_NaN());
}
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Setting, name, value, unit, source)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SamplerHost, address, hostname, kernel, cpu_model,
                                                cpu_count, memory_bytes, program_version,
                                                clock_offset_ms, round_trip_ms)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Environment, server_version, server_version_num,
                                                settings, data_checksums, kernel, cpu_model,
                                                cpu_count, memory_bytes, hostname,
                                                pgwaitprof_version, wait_event_descriptions,
                                                sampler_host)
static void to_json(json& j, const Outage& outage) {
  j = {{"start_s", outage.start.count()},
       {"duration_s", outage.duration.count()},
       {"missed_ticks", outage.missed_ticks},
       {"reason", outage.reason},
       {"connection", outage.connection}};
}

static void from_json(const json& j, Outage& outage) {
  outage.start = seconds_in(j, "start_s");
  outage.duration = seconds_in(j, "duration_s");
  outage.missed_ticks = j.value("missed_ticks", uint64_t{0});
  outage.reason = j.value("reason", "");
  outage.connection = j.value("connection", kSamplerConnection);
}
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RunToRunFigure, name, value, sd, half_width)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RunToRun, runs, needed, figures)
static void to_json(json& j, const KernelTime& time) {
  j = {{"on_cpu_s", time.on_cpu.count()},
       {"runqueue_s", time.runqueue.count()},
       {"covered_s", time.covered.count()}};
}

static void from_json(const json& j, KernelTime& time) {
  time.on_cpu = seconds_in(j, "on_cpu_s");
  time.runqueue = seconds_in(j, "runqueue_s");
  time.covered = seconds_in(j, "covered_s");
}

static void to_json(json& j, const LockBlocker& blocker) {
  j = {{"lock_type", blocker.lock_type},
       {"object", blocker.object},
       {"blocker_statement", blocker.blocker_statement},
       {"blocker_state", blocker.blocker_state},
       {"blocker_application", blocker.blocker_application},
       {"blocker_backend_type", blocker.blocker_backend_type},
       {"example_blocker_pid", blocker.example_blocker_pid},
       {"example_object", blocker.example_object},
       {"prepared", blocker.prepared},
       {"prepared_by", blocker.prepared_by},
       {"blockers", blocker.blockers},
       {"max_xact_age_s", blocker.max_xact_age.count()},
       {"chain_depth", blocker.chain_depth},
       {"observations", blocker.observations}};
}

static void from_json(const json& j, LockBlocker& blocker) {
  const LockBlocker defaults;
  blocker.lock_type = j.value("lock_type", "");
  blocker.object = j.value("object", "");
  blocker.blocker_statement = j.value("blocker_statement", "");
  blocker.blocker_state = j.value("blocker_state", "");
  blocker.blocker_application = j.value("blocker_application", "");
  blocker.blocker_backend_type = j.value("blocker_backend_type", "");
  blocker.example_blocker_pid = j.value("example_blocker_pid", defaults.example_blocker_pid);
  blocker.example_object = j.value("example_object", "");
  blocker.prepared = j.value("prepared", "");
  blocker.prepared_by = j.value("prepared_by", "");
  blocker.blockers = j.value("blockers", defaults.blockers);
  blocker.max_xact_age = base::Seconds(j.value("max_xact_age_s", defaults.max_xact_age.count()));
  blocker.chain_depth = j.value("chain_depth", defaults.chain_depth);
  blocker.observations = j.value("observations", defaults.observations);
}

static void to_json(json& j, const StatementProfile& statement) {
  j = {{"query_id", statement.query_id}, {"text", statement.text},
       {"samples", statement.samples},   {"waits", statement.waits},
       {"calls", statement.calls},       {"mean_exec_ms", count_or_null(statement.mean_exec)}};
}

static void from_json(const json& j, StatementProfile& statement) {
  statement.query_id = j.value("query_id", int64_t{0});
  statement.text = j.value("text", "");
  statement.samples = j.value("samples", uint64_t{0});
  statement.waits = j.value("waits", std::map<std::string, uint64_t>{});
  statement.calls = j.value("calls", std::optional<uint64_t>{});
  statement.mean_exec = optional_in<base::Milliseconds>(j, "mean_exec_ms");
}

static json latency_to_json(const LatencySummary& latency) {
  return {{"count", latency.count},
          {"failed", latency.failed},
          {"skipped", latency.skipped},
          {"retries", latency.retries},
          {"min_ms", number_or_null(latency.min.count())},
          {"mean_ms", number_or_null(latency.mean.count())},
          {"p50_ms", number_or_null(latency.p50.count())},
          {"p95_ms", number_or_null(latency.p95.count())},
          {"p99_ms", number_or_null(latency.p99.count())},
          {"max_ms", number_or_null(latency.max.count())}};
}

static std::optional<LatencySummary> latency_from_json(const json& j) {
  if (j.is_null()) return std::nullopt;
  LatencySummary latency;
  latency.count = j.value("count", uint64_t{0});
  latency.failed = j.value("failed", uint64_t{0});
  latency.skipped = j.value("skipped", uint64_t{0});
  latency.retries = j.value("retries", uint64_t{0});
  latency.min = base::Milliseconds(number_or_nan(j.at("min_ms")));
  latency.mean = base::Milliseconds(number_or_nan(j.at("mean_ms")));
  latency.p50 = base::Milliseconds(number_or_nan(j.at("p50_ms")));
  latency.p95 = base::Milliseconds(number_or_nan(j.at("p95_ms")));
  latency.p99 = base::Milliseconds(number_or_nan(j.at("p99_ms")));
  latency.max = base::Milliseconds(number_or_nan(j.at("max_ms")));
  return latency;
}

static json optional_latency(const std::optional<LatencySummary>& latency) {
  return latency ? latency_to_json(*latency) : json();
}

static json sampler_to_json(const SamplerInfo& sampler) {
  return {{"source", to_string(sampler.source)},
          {"requested_source", to_string(sampler.requested)},
          {"source_reason", sampler.source_reason},
          {"hz", sampler.hz},
          {"period_s", sampler.period.count()},
          {"achieved_hz", sampler.achieved_hz},
          {"snapshots", sampler.snapshots},
          {"missed_ticks", sampler.missed_ticks},
          {"snapshot_p99_ms", sampler.snapshot_p99.count()},
          {"hidden_backends", sampler.hidden_backends},
          {"trace", trace_counts_to_json(sampler.trace)}};
}

static SamplerInfo sampler_from_json(const json& j) {
  SamplerInfo sampler;
  const auto source = j.value("source", std::string(to_string(SamplerSource::kActivity)));
  const auto parsed = parse_sampler_source(source);
  if (!parsed) throw std::runtime_error(fmt::format("unknown sampler source \"{}\"", source));
  sampler.source = *parsed;
  // Before version 5 the source was always the one asked for.
  const auto requested = parse_sampler_source(j.value("requested_source", source));
  if (!requested) throw std::runtime_error("unknown requested sampler source");
  sampler.requested = *requested;
  sampler.source_reason = j.value("source_reason", std::string());
  sampler.hz = j.value("hz", 0.0);
  sampler.period = seconds_in(j, "period_s");
  sampler.achieved_hz = j.value("achieved_hz", 0.0);
  sampler.snapshots = j.value("snapshots", uint64_t{0});
  sampler.missed_ticks = j.value("missed_ticks", uint64_t{0});
  sampler.snapshot_p99 = base::Milliseconds(j.value("snapshot_p99_ms", 0.0));
  sampler.hidden_backends = j.value("hidden_backends", 0);
  if (const auto trace = j.find("trace"); trace != j.end()) {
    sampler.trace = trace_counts_from_json(*trace);
  }
  return sampler;
}

static json progress_to_json(const LoadgenProgress& progress) {
  json j = {{"elapsed_s", progress.elapsed.count()},
            {"tps", number_or_null(progress.tps)},
            {"latency_avg_ms", number_or_null(progress.latency_avg.count())},
            {"latency_stddev_ms", number_or_null(progress.latency_stddev.count())},
            {"failed", progress.failed},
            {"lag_ms", count_or_null(progress.lag)},
            {"skipped", progress.skipped}};
  if (progress.qps) j["qps"] = *progress.qps;
  if (progress.latency_at_percentile) {
    j["latency_percentile_ms"] = progress.latency_at_percentile->count();
    j["latency_percentile"] = progress.latency_percentile;
  }
  return j;
}

static LoadgenProgress progress_from_json(const json& j) {
  LoadgenProgress progress;
  progress.elapsed = base::Seconds(j.at("elapsed_s").get<double>());
  progress.tps = number_or_nan(j.at("tps"));
  progress.latency_avg = base::Milliseconds(number_or_nan(j.at("latency_avg_ms")));
  progress.latency_stddev = base::Milliseconds(number_or_nan(j.at("latency_stddev_ms")));
  progress.failed = j.value("failed", uint64_t{0});
  progress.lag = optional_in<base::Milliseconds>(j, "lag_ms");
  progress.skipped = j.value("skipped", uint64_t{0});
  progress.qps = j.value("qps", std::optional<double>{});
  progress.latency_at_percentile = optional_in<base::Milliseconds>(j, "latency_percentile_ms");
  progress.latency_percentile = j.value("latency_percentile", 0.0);
  return progress;
}

static json work_to_json(const std::optional<WorkDone>& work) {
  if (!work) return json();
  return {{"rows", work->rows},
          {"bytes", work->bytes},
          {"transactions", work->transactions},
          {"elapsed_s", work->elapsed.count()}};
}

static std::optional<WorkDone> work_from_json(const json& j) {
  if (j.is_null()) return std::nullopt;
  WorkDone work;
  work.rows = j.value("rows", uint64_t{0});
  work.bytes = j.value("bytes", uint64_t{0});
  work.transactions = j.value("transactions", uint64_t{0});
  work.elapsed = seconds_in(j, "elapsed_s");
  return work;
}

static json checkpoint_to_json(const std::optional<CheckpointAfter>& checkpoint) {
  if (!checkpoint) return json();
  json profile;
  to_json(profile, checkpoint->profile);
  return {{"start_s", checkpoint->start.count()},
          {"duration_s", checkpoint->duration.count()},
          {"error", checkpoint->error},
          {"profile", std::move(profile)}};
}

static std::optional<CheckpointAfter> checkpoint_from_json(const json& j) {
  if (j.is_null()) return std::nullopt;
  CheckpointAfter checkpoint;
  checkpoint.start = seconds_in(j, "start_s");
  checkpoint.duration = seconds_in(j, "duration_s");
  checkpoint.error = j.value("error", "");
  if (j.contains("profile")) checkpoint.profile = profile_from_json(j.at("profile"));
  return checkpoint;
}

static json slice_to_json(const TimelineSlice& slice) {
  json profile;
  to_json(profile, slice.profile);
  json document = {{"start_s", slice.start.count()},
                   {"duration_s", slice.duration.count()},
                   {"profile", std::move(profile)},
                   {"loadgen", slice.loadgen ? progress_to_json(*slice.loadgen) : json()},
                   {"background", slice.background},
                   {"cpu", slice.cpu},
                   {"sampler_outage", slice.sampler_outage},
                   {"latency", optional_latency(slice.latency)},
                   {"kernel", slice.kernel},
                   {"lock_blocker", slice.lock_blocker}};
  if (slice.checkpoint_after) document["checkpoint_after"] = true;
  if (slice.running.snapshots > 0) {
    document["running"] = {{"snapshots", slice.running.snapshots},
                           {"client_backends", slice.running.running}};
  }
  if (slice.server_tps) document["server_tps"] = number_or_null(*slice.server_tps);
  if (slice.server_tps_spread) document["server_tps_spread"] = true;
  if (slice.server_calls_per_s) {
    document["server_calls_per_s"] = number_or_null(*slice.server_calls_per_s);
  }
  return document;
}

static TimelineSlice slice_from_json(const json& entry) {
  TimelineSlice slice;
  slice.start = base::Seconds(entry.at("start_s").get<double>());
  slice.duration = base::Seconds(entry.at("duration_s").get<double>());
  slice.profile = profile_from_json(entry.at("profile"));
  if (!entry.at("loadgen").is_null()) slice.loadgen = progress_from_json(entry.at("loadgen"));
  slice.background = entry.value("background", Background{});
  slice.cpu = entry.value("cpu", std::optional<HostCpu>{});
  slice.sampler_outage = entry.value("sampler_outage", false);
  if (entry.contains("latency")) slice.latency = latency_from_json(entry.at("latency"));
  slice.kernel = entry.value("kernel", std::map<std::string, KernelTime>{});
  slice.lock_blocker = entry.value("lock_blocker", "");
  slice.checkpoint_after = entry.value("checkpoint_after", false);
  if (const auto running = entry.find("running"); running != entry.end()) {
    slice.running = {running->at("snapshots").get<uint64_t>(),
                     running->at("client_backends").get<uint64_t>()};
  }
  if (entry.contains("server_tps")) slice.server_tps = number_or_nan(entry.at("server_tps"));
  slice.server_tps_spread = entry.value("server_tps_spread", false);
  if (entry.contains("server_calls_per_s")) {
    slice.server_calls_per_s = number_or_nan(entry.at("server_calls_per_s"));
  }
  return slice;
}

static LoadgenSummary loadgen_summary_from_json(const json& document) {
  // A summary made of the server's counters has no latency (NaN, written as null).
  json summary = document;
  const bool no_latency = summary.contains("latency_avg_ms") && summary["latency_avg_ms"].is_null();
  if (no_latency) summary["latency_avg_ms"] = 0.0;
  auto loadgen = summary.get<LoadgenSummary>();
  if (no_latency) {
    loadgen.latency_avg = base::Milliseconds(std::numeric_limits<double>::quiet_NaN());
  }
  loadgen.qps = summary.value("qps", std::optional<double>{});
  loadgen.latency_at_percentile = optional_in<base::Milliseconds>(summary, "latency_percentile_ms");
  loadgen.latency_percentile = summary.value("latency_percentile", 0.0);
  return loadgen;
}

json to_json(const Run& run) {
  json timeline = json::array();
  for (const auto& slice : run.timeline) timeline.push_back(slice_to_json(slice));
  json query_ids = json::array();
  for (const auto& [query_id, count] : run.query_ids) {
    query_ids.push_back({{"query_id", query_id}, {"count", count}});
  }
  json profile;
  to_json(profile, run.profile);
  json document = {{"schema_version", run.schema_version},
                   {"id", run.id},
                   {"label", run.label},
                   {"tags", run.tags},
                   {"target", run.target},
                   {"workload", run.workload},
                   {"variant", run.variant},
                   {"repeat", run.repeat},
                   {"clients", run.clients},
                   {"loadgen_argv", run.loadgen_argv},
                   {"status", to_string(run.status)},
                   {"error", run.error},
                   {"started_at", run.started_at},
                   {"ended_at", run.ended_at},
                   {"duration_s", run.duration.count()},
                   {"interval_s", run.interval.count()},
                   {"sampler", sampler_to_json(run.sampler)},
                   {"profile", std::move(profile)},
                   {"query_ids", std::move(query_ids)},
                   {"statements", run.statements},
                   {"statements_note", run.statements_note},
                   {"lock_blockers", run.lock_blockers},
                   {"lock_lookups", run.lock_lookups},
                   {"kernel", run.kernel},
                   {"timeline", std::move(timeline)},
                   {"stalls", run.stalls},
                   {"outages", run.outages},
                   {"environment", run.environment},
                   {"loadgen", run.loadgen},
                   {"latency", optional_latency(run.latency)},
                   {"latency_sampling_rate", run.latency_sampling_rate},
                   {"loadgen_exit_code", run.loadgen_exit_code},
                   {"loadgen_stderr", run.loadgen_stderr},
                   {"warnings", run.warnings}};
  // Only fixed-work runs and runs with --checkpoint-after have these.
  if (run.work) document["work"] = work_to_json(run.work);
  if (run.checkpoint_after) document["checkpoint_after"] = checkpoint_to_json(run.checkpoint_after);
  if (run.run_to_run) document["run_to_run"] = *run.run_to_run;
  if (run.cpu_profile) document["cpu_profile"] = *run.cpu_profile;
  // Only runs sampled on another host (run --sampler-host) have one.
  if (!run.environment.sampler_host) document["environment"].erase("sampler_host");
  if (!run.throughput_source.empty()) document["throughput_source"] = run.throughput_source;
  if (run.loadgen && run.loadgen->qps) document["loadgen"]["qps"] = *run.loadgen->qps;
  if (run.loadgen && run.loadgen->latency_at_percentile) {
    document["loadgen"]["latency_percentile_ms"] = run.loadgen->latency_at_percentile->count();
    document["loadgen"]["latency_percentile"] = run.loadgen->latency_percentile;
  }
  return document;
}

static void check_schema_version(int version) {
  if (version < kOldestReadableSchemaVersion || version > kReportSchemaVersion) {
    throw std::runtime_error(fmt::format("unsupported report schema version {} (expected {} to {})",
                                         version, kOldestReadableSchemaVersion,
                                         kReportSchemaVersion));
  }
}

Run run_from_json(const json& j) {
  Run run;
  check_schema_version(j.at("schema_version").get<int>());
  // Read as the current version: fields a version-1 document lacks take their defaults.
  run.schema_version = kReportSchemaVersion;
  run.id = j.at("id").get<std::string>();
  run.label = j.value("label", "");
  if (j.contains("tags")) run.tags = j.at("tags").get<std::map<std::string, std::string>>();
  run.target = j.value("target", "");
  run.workload = j.value("workload", "");
  run.variant = j.value("variant", "");
  run.repeat = j.value("repeat", 0);
  run.clients = j.value("clients", 0);
  run.loadgen_argv = j.value("loadgen_argv", std::vector<std::string>{});
  run.throughput_source = j.value("throughput_source", "");
  const auto status = j.at("status").get<std::string>();
  const auto parsed_status = parse_run_status(status);
  if (!parsed_status) throw std::runtime_error(fmt::format("unknown run status \"{}\"", status));
  run.status = *parsed_status;
  run.error = j.value("error", "");
  run.started_at = j.value("started_at", "");
  run.ended_at = j.value("ended_at", "");
  run.duration = seconds_in(j, "duration_s");
  run.interval = base::Seconds(j.value("interval_s", 1.0));
  run.sampler = sampler_from_json(j.at("sampler"));
  run.profile = profile_from_json(j.at("profile"));
  for (const auto& entry : j.value("query_ids", json::array())) {
    run.query_ids[entry.at("query_id").get<int64_t>()] = entry.at("count").get<uint64_t>();
  }
  run.statements = j.value("statements", std::vector<StatementProfile>{});
  run.statements_note = j.value("statements_note", "");
  run.lock_blockers = j.value("lock_blockers", std::vector<LockBlocker>{});
  run.lock_lookups = j.value("lock_lookups", uint64_t{0});
  run.kernel = j.value("kernel", std::map<std::string, KernelTime>{});
  for (const auto& entry : j.value("timeline", json::array())) {
    run.timeline.push_back(slice_from_json(entry));
  }
  run.stalls = j.value("stalls", std::vector<Stall>{});
  run.outages = j.value("outages", std::vector<Outage>{});
  run.environment = j.value("environment", Environment{});
  if (const auto found = j.find("loadgen"); found != j.end() && found->is_object()) {
    run.loadgen = loadgen_summary_from_json(*found);
  }
  if (j.contains("latency")) run.latency = latency_from_json(j.at("latency"));
  run.latency_sampling_rate = j.value("latency_sampling_rate", 1.0);
  run.loadgen_exit_code = j.value("loadgen_exit_code", 0);
  run.loadgen_stderr = j.value("loadgen_stderr", "");
  run.warnings = j.value("warnings", std::vector<std::string>{});
  if (j.contains("work")) run.work = work_from_json(j.at("work"));
  if (j.contains("checkpoint_after")) {
    run.checkpoint_after = checkpoint_from_json(j.at("checkpoint_after"));
  }
  if (j.contains("run_to_run")) run.run_to_run = j.at("run_to_run").get<RunToRun>();
  if (j.contains("cpu_profile")) run.cpu_profile = j.at("cpu_profile").get<CpuProfile>();
  return run;
}

}  // namespace pgwaitprof::model
