// The pure parts of a run's steps: the run record from the request, a COPY load's summary, a
// fixed-work run's work, the status a run ends with, the statements' deltas, the latency
// timeline's plan and the checkpoint's intervals (see run_steps.h).
#include "daemon/engine/run_steps.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "collectors/pg_session.h"
#include "exporters/render/text_format.h"
#include "loadgen/pgbench_parser.h"
#include "loadgen/sysbench_parser.h"
#include "model/pgbench_scripts.h"
#include "model/workloads.h"

namespace pgwaitprof::engine::run_steps {
namespace {

constexpr size_t kStderrTailBytes = 8192;

}  // namespace

std::string iso_utc(model::SystemClock::time_point at) {
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}Z", fmt::gmtime(model::SystemClock::to_time_t(at)));
}

void describe_request(model::Run& run, const RunRequest& request,
                      const collectors::SamplerOptions& sampler) {
  // Stored with its control characters written out, so that report.json, the index and the
  // results database hold no terminal escapes; every renderer still escapes it for its format.
  run.label = exporters::text_format::text_escape(request.label);
  for (const auto& [key, value] : request.tags) {
    run.tags.emplace(key, exporters::text_format::text_escape(value));
  }
  run.target = request.conninfo.empty() ? "(PG* environment variables)"
                                        : collectors::mask_password(request.conninfo);
  run.workload = workload_name(request);
  run.variant = request.variant;
  run.repeat = request.repeat;
  // As asked for, so that a run that fails before its load generator starts still says how many
  // clients it was for (a matrix would otherwise show it in a column of 0 clients).
  run.clients = loadgen::pgbench_int_option(request.pgbench_args, 'c', "client", 1);
  run.throughput_source = "pgbench";
  switch (request.kind) {
    case loadgen::LoadgenKind::kPgbench:
      break;
    case loadgen::LoadgenKind::kSysbench:
      run.throughput_source = "sysbench";
      run.clients = loadgen::pgbench_int_option(request.pgbench_args, '\0', "threads", 1);
      break;
    case loadgen::LoadgenKind::kCommand:
      run.throughput_source = "server";
      run.clients = 0;
      break;
    case loadgen::LoadgenKind::kNone:
      run.throughput_source = "server";
      run.clients = 0;
      break;
  }
  run.interval = request.interval;
  run.sampler.requested = sampler.source;
  // Auto's choice is made when the sampler connects (note_sampler_source).
  run.sampler.source = sampler.source == model::SamplerSource::kAuto
                           ? model::SamplerSource::kActivity
                           : sampler.source;
  // The traced source's rate is that of its in-kernel on-CPU samples.
  run.sampler.hz = model::takes_snapshots(run.sampler.source) ||
                           run.sampler.source == model::SamplerSource::kTrace
                       ? sampler.hz
                       : 0;
}

std::optional<model::LoadgenSummary> copy_summary(int clients, long long scale, int exit_code,
                                                  base::Seconds load_elapsed) {
  if (exit_code != 0 || load_elapsed <= base::Seconds(0)) return std::nullopt;
  model::LoadgenSummary summary;
  summary.transaction_type = fmt::format("COPY {} FROM STDIN", model::kCopyTargetTable);
  summary.scale = static_cast<double>(scale);
  summary.query_mode = "simple";
  summary.clients = clients;
  summary.threads = 1;
  summary.transactions = static_cast<uint64_t>(clients);
  summary.latency_avg = load_elapsed;
  summary.tps = static_cast<double>(summary.transactions) / load_elapsed.count();
  return summary;
}

std::optional<model::WorkDone> work_done(const RunRequest& request,
                                         const std::optional<model::LoadgenSummary>& summary,
                                         const LoadFacts& load) {
  const auto* workload = model::find_workload(request.workload);
  const bool fixed = (workload != nullptr && workload->fixed_work) ||
                     loadgen::pgbench_option(request.pgbench_args, 't', "transactions");
  if (!fixed || load.elapsed <= base::Seconds(0) || !summary) return std::nullopt;
  model::WorkDone work;
  work.transactions = summary->transactions;
  work.elapsed = load.elapsed;
  if (workload != nullptr && workload->copy) {
    work.rows = work.transactions * static_cast<uint64_t>(load.scale * model::kAccountsPerScale);
    work.bytes = work.transactions * load.copy_bytes;
  }
  return work;
}

void read_loadgen_summary(model::Run& run, std::string_view stdout_text,
                          std::string_view stderr_text, bool expected) {
  try {
    run.loadgen = loadgen::parse_summary(stdout_text);
    run.loadgen->aborted = loadgen::aborted_clients(stderr_text);
    if (run.loadgen->clients > 0) run.clients = run.loadgen->clients;
  } catch (const loadgen::PgbenchParseError& error) {
    if (expected) run.warnings.push_back(error.what());
  }
}

void read_sysbench_summary(model::Run& run, const std::vector<std::string>& args,
                           std::string_view stdout_text, bool expected) {
  // The test is sysbench's first argument that is not an option or a step.
  std::string test;
  for (const auto& arg : args) {
    if (arg.starts_with("-") || arg == loadgen::sysbench_step(args)) continue;
    test = arg;
    break;
  }
  run.loadgen = loadgen::parse_sysbench_summary(stdout_text, test);
  if (run.loadgen && run.loadgen->clients > 0) run.clients = run.loadgen->clients;
  if (!run.loadgen && expected) run.warnings.emplace_back("sysbench printed no summary");
}

std::optional<model::LoadgenSummary> server_summary(
    const model::RunRecorder::ServerTotals& totals) {
  if (totals.covered <= base::Seconds(0)) return std::nullopt;
  model::LoadgenSummary summary;
  summary.transaction_type = "server-side: pg_stat_database (xact_commit + xact_rollback)";
  const double transactions = std::max(0.0, totals.transactions);
  summary.transactions = static_cast<uint64_t>(std::llround(transactions));
  summary.duration = totals.covered;
  summary.tps = transactions / totals.covered.count();
  summary.latency_avg = base::Milliseconds(std::numeric_limits<double>::quiet_NaN());
  if (totals.calls) summary.qps = std::max(0.0, *totals.calls) / totals.covered.count();
  return summary;
}

std::string workload_name(const RunRequest& request) {
  switch (request.kind) {
    case loadgen::LoadgenKind::kPgbench:
      // The user's own scripts when they gave any (they are what pgbench runs).
      return model::scripts_workload_name(model::pgbench_scripts(request.pgbench_args))
          .value_or(request.workload);
    case loadgen::LoadgenKind::kNone:
      return "record";
    default:
      return std::string(loadgen::to_string(request.kind));
  }
}

std::string loadgen_name(const RunRequest& request) {
  if (request.kind == loadgen::LoadgenKind::kCommand && !request.pgbench_args.empty()) {
    return std::filesystem::path(request.pgbench_args.front()).filename().string();
  }
  return std::string(loadgen::to_string(request.kind));
}

std::string loadgen_log_name(loadgen::LoadgenKind kind) {
  if (kind == loadgen::LoadgenKind::kNone) return "record.log";
  return std::string(loadgen::to_string(kind)) + ".log";
}

void settle_status(model::Run& run, const LoadEnd& end, const LoadCheck& check) {
  run.loadgen_exit_code = end.exit_code;
  if (end.interrupted) {
    run.status = model::RunStatus::kInterrupted;
    run.error = end.interrupt_reason;
  } else if (end.exit_code != 0 && !end.copy_from_stdin) {
    fail(run,
         {loadgen::describe_loadgen_failure(end.exit_code, end.stderr_text, check.loadgen_name)});
  } else if (check.elapsed && *check.elapsed < check.interval) {
    fail(run, {fmt::format("{} exited after {:.2f} s, within the first interval of {:g} s: "
                           "nothing to profile",
                           check.loadgen_name, check.elapsed->count(), check.interval.count())});
  }
  if (run.status != model::RunStatus::kCompleted) {
    const auto text = end.stderr_text;
    run.loadgen_stderr = std::string(
        text.size() > kStderrTailBytes ? text.substr(text.size() - kStderrTailBytes) : text);
  }
}

void fail_report(model::Run& run, std::string_view message) {
  if (run.status == model::RunStatus::kCompleted) run.status = model::RunStatus::kFailed;
  const auto why = fmt::format("could not write the report: {}", message);
  run.error = run.error.empty() ? why : run.error + "; " + why;
}

StatementDeltas statement_deltas(const std::map<int64_t, collectors::StatementStats>& before,
                                 const std::map<int64_t, collectors::StatementStats>& after) {
  StatementDeltas result;
  for (const auto& [query_id, stats] : after) {
    const auto earlier = before.find(query_id);
    const uint64_t calls_before = earlier == before.end() ? 0 : earlier->second.calls;
    const double time_before = earlier == before.end() ? 0 : earlier->second.total_exec_ms;
    if (stats.calls <= calls_before) continue;
    const auto calls = stats.calls - calls_before;
    result.deltas[query_id] = {calls, base::Milliseconds((stats.total_exec_ms - time_before) /
                                                         static_cast<double>(calls))};
    result.texts[query_id] = stats.text;
  }
  return result;
}

std::string missing_statements_note(const model::Run& run, std::string_view compute_query_id) {
  if (!run.statements.empty() || run.profile.snapshots() == 0) return "";
  if (run.environment.server_version_num > 0 && run.environment.server_version_num < 140000) {
    return "PostgreSQL 13 and older show no query_id in pg_stat_activity";
  }
  if (compute_query_id != "on") {
    return fmt::format(
        "no query ids were sampled: compute_query_id is \"{}\"; turn it on with ALTER SYSTEM SET "
        "compute_query_id = on; SELECT pg_reload_conf(); (or load pg_stat_statements)",
        compute_query_id);
  }
  return "";
}

loadgen::LatencyTimelineOptions latency_timeline_options(const loadgen::LoadgenCommand& command,
                                                         base::Seconds interval,
                                                         model::SystemClock::time_point start_wall,
                                                         model::SystemClock::time_point now) {
  loadgen::LatencyTimelineOptions options;
  options.start = start_wall;
  options.interval = std::chrono::duration_cast<std::chrono::microseconds>(interval);
  options.columns = command.transaction_log_columns;
  options.sampling_rate = command.transaction_log_sampling_rate;
  const base::Seconds elapsed = now - start_wall;
  options.max_intervals = static_cast<size_t>(elapsed / interval) + 2;
  return options;
}

void mark_checkpoint_after(model::Run& run) {
  if (!run.checkpoint_after) return;
  auto& checkpoint = *run.checkpoint_after;
  const base::Seconds end = checkpoint.start + checkpoint.duration;
  for (auto& slice : run.timeline) {
    if (slice.start + slice.duration <= checkpoint.start || slice.start > end) continue;
    slice.checkpoint_after = true;
    checkpoint.profile.merge(slice.profile);
  }
}

void note_sampler(model::Run& run, const collectors::TargetSampler& sampler) {
  run.sampler.source = sampler.source_in_use();
  run.sampler.source_reason = sampler.source_reason();
  if (run.sampler.source == model::SamplerSource::kTrace) run.sampler.hz = sampler.source_hz();
  run.sampler.period = base::Seconds(sampler.source_period_s());
  if (const auto* remote = sampler.remote_feed()) run.environment.sampler_host = remote->host();
}

}  // namespace pgwaitprof::engine::run_steps
