// report.json codec and stall detection.
#include "daemon/model/run.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace nlohmann {
template <typename T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& value) {
    if (value) {
      j = *value;
    } else {
      j = nullptr;
    }
  }
  static void from_json(const json& j, std::optional<T>& value) {
    if (j.is_null()) {
      value.reset();
    } else {
      value = j.get<T>();
    }
  }
};
}  // namespace nlohmann

namespace pgwaitprof::model {

using nlohmann::json;

// NaN (pgbench's "-nan" latency of an interval without transactions) is stored as null.
static json number_or_null(double value) {
  return std::isfinite(value) ? json(value) : json(nullptr);
}
static double number_or_nan(const json& json_value) {
  return json_value.is_null() ? std::numeric_limits<double>::quiet_NaN() : json_value.get<double>();
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(LoadgenSummary, transaction_type, scale, query_mode,
                                                clients, threads, duration_s, transactions, failed,
                                                latency_avg_ms, latency_stddev_ms,
                                                initial_connection_time_ms, tps, aborted)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(HostCpu, user_pct, system_pct, iowait_pct,
                                                idle_pct, loadgen_cores)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Background, autovacuum, checkpoint, manual_vacuum)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(StallWait, wait, backends)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Stall, start_s, duration_s, tps, median_tps,
                                                client_backends, waits, background)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Setting, name, value, unit, source)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Environment, server_version, server_version_num,
                                                settings, data_checksums, kernel, cpu_model,
                                                cpu_count, memory_bytes, hostname)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SamplerInfo, source, hz, period_s, achieved_hz,
                                                snapshots, missed_ticks, snapshot_p99_ms,
                                                hidden_backends)

static json progress_to_json(const LoadgenProgress& progress) {
  return {{"elapsed_s", progress.elapsed_s},
          {"tps", number_or_null(progress.tps)},
          {"latency_avg_ms", number_or_null(progress.latency_avg_ms)},
          {"latency_stddev_ms", number_or_null(progress.latency_stddev_ms)},
          {"failed", progress.failed},
          {"lag_ms", progress.lag_ms},
          {"skipped", progress.skipped}};
}

static LoadgenProgress progress_from_json(const json& j) {
  LoadgenProgress progress;
  progress.elapsed_s = j.at("elapsed_s").get<double>();
  progress.tps = number_or_nan(j.at("tps"));
  progress.latency_avg_ms = number_or_nan(j.at("latency_avg_ms"));
  progress.latency_stddev_ms = number_or_nan(j.at("latency_stddev_ms"));
  progress.failed = j.value("failed", uint64_t{0});
  progress.lag_ms = j.value("lag_ms", std::optional<double>{});
  progress.skipped = j.value("skipped", uint64_t{0});
  return progress;
}

void to_json(json& j, const Profile& profile) {
  json entries = json::array();
  for (const auto& [key, count] : profile.counts()) {
    entries.push_back({{"backend_type", key.backend_type},
                       {"state", key.state},
                       {"wait_event_type", key.wait_event_type},
                       {"wait_event", key.wait_event},
                       {"count", count}});
  }
  j = {{"snapshots", profile.snapshots()}, {"entries", std::move(entries)}};
}

Profile profile_from_json(const json& j) {
  Profile profile;
  profile.add_snapshots(j.at("snapshots").get<uint64_t>());
  for (const auto& entry : j.at("entries")) {
    profile.add({entry.at("backend_type").get<std::string>(), entry.at("state").get<std::string>(),
                 entry.at("wait_event_type").get<std::string>(),
                 entry.at("wait_event").get<std::string>()},
                entry.at("count").get<uint64_t>());
  }
  return profile;
}

json to_json(const Run& run) {
  json timeline = json::array();
  for (const auto& slice : run.timeline) {
    json profile;
    to_json(profile, slice.profile);
    timeline.push_back({{"start_s", slice.start_s},
                        {"duration_s", slice.duration_s},
                        {"profile", std::move(profile)},
                        {"loadgen", slice.loadgen ? progress_to_json(*slice.loadgen) : json()},
                        {"background", slice.background},
                        {"cpu", slice.cpu}});
  }
  json query_ids = json::array();
  for (const auto& [query_id, count] : run.query_ids) {
    query_ids.push_back({{"query_id", query_id}, {"count", count}});
  }
  json profile;
  to_json(profile, run.profile);
  return {{"schema_version", run.schema_version},
          {"id", run.id},
          {"label", run.label},
          {"target", run.target},
          {"workload", run.workload},
          {"variant", run.variant},
          {"repeat", run.repeat},
          {"clients", run.clients},
          {"loadgen_argv", run.loadgen_argv},
          {"status", run.status},
          {"error", run.error},
          {"started_at", run.started_at},
          {"ended_at", run.ended_at},
          {"duration_s", run.duration_s},
          {"interval_s", run.interval_s},
          {"sampler", run.sampler},
          {"profile", std::move(profile)},
          {"query_ids", std::move(query_ids)},
          {"timeline", std::move(timeline)},
          {"stalls", run.stalls},
          {"environment", run.environment},
          {"loadgen", run.loadgen},
          {"loadgen_exit_code", run.loadgen_exit_code},
          {"loadgen_stderr", run.loadgen_stderr},
          {"warnings", run.warnings}};
}

Run run_from_json(const json& j) {
  Run run;
  run.schema_version = j.at("schema_version").get<int>();
  if (run.schema_version != kReportSchemaVersion) {
    throw std::runtime_error(fmt::format("unsupported report schema version {} (expected {})",
                                         run.schema_version, kReportSchemaVersion));
  }
  run.id = j.at("id").get<std::string>();
  run.label = j.value("label", "");
  run.target = j.value("target", "");
  run.workload = j.value("workload", "");
  run.variant = j.value("variant", "");
  run.repeat = j.value("repeat", 0);
  run.clients = j.value("clients", 0);
  run.loadgen_argv = j.value("loadgen_argv", std::vector<std::string>{});
  run.status = j.at("status").get<std::string>();
  run.error = j.value("error", "");
  run.started_at = j.value("started_at", "");
  run.ended_at = j.value("ended_at", "");
  run.duration_s = j.value("duration_s", 0.0);
  run.interval_s = j.value("interval_s", 1.0);
  run.sampler = j.at("sampler").get<SamplerInfo>();
  run.profile = profile_from_json(j.at("profile"));
  for (const auto& entry : j.value("query_ids", json::array())) {
    run.query_ids[entry.at("query_id").get<int64_t>()] = entry.at("count").get<uint64_t>();
  }
  for (const auto& entry : j.value("timeline", json::array())) {
    TimelineSlice slice;
    slice.start_s = entry.at("start_s").get<double>();
    slice.duration_s = entry.at("duration_s").get<double>();
    slice.profile = profile_from_json(entry.at("profile"));
    if (!entry.at("loadgen").is_null()) slice.loadgen = progress_from_json(entry.at("loadgen"));
    slice.background = entry.value("background", Background{});
    slice.cpu = entry.value("cpu", std::optional<HostCpu>{});
    run.timeline.push_back(std::move(slice));
  }
  run.stalls = j.value("stalls", std::vector<Stall>{});
  run.environment = j.value("environment", Environment{});
  run.loadgen = j.value("loadgen", std::optional<LoadgenSummary>{});
  run.loadgen_exit_code = j.value("loadgen_exit_code", 0);
  run.loadgen_stderr = j.value("loadgen_stderr", "");
  run.warnings = j.value("warnings", std::vector<std::string>{});
  return run;
}

std::string Background::flags() const {
  std::string flags;
  auto add = [&](bool on, const char* flag) {
    if (!on) return;
    if (!flags.empty()) flags += ' ';
    flags += flag;
  };
  add(autovacuum, "av");
  add(checkpoint, "ch");
  add(manual_vacuum, "vac");
  return flags;
}

std::string Stall::summary() const {
  std::string text = fmt::format("{:.0f} s: {:.0f} tps", start_s, tps);
  if (duration_s > 1.5) text = fmt::format("{:.0f}-{:.0f} s: {:.0f} tps", start_s, start_s + duration_s, tps);
  if (!waits.empty()) {
    text += fmt::format(", {:.0f}/{:.0f} backends on {}", waits.front().backends, client_backends,
                        waits.front().wait);
  }
  text += fmt::format(" (median {:.0f} tps)", median_tps);
  if (!background.empty()) text += " [" + background + "]";
  return text;
}

static bool is_client_load(const WaitKey& key) {
  return key.backend_type == "client backend" && !is_idle(key);
}

std::vector<Stall> detect_stalls(const std::vector<TimelineSlice>& timeline, double fraction) {
  std::vector<double> tps;
  for (const auto& slice : timeline) {
    if (slice.loadgen && std::isfinite(slice.loadgen->tps)) tps.push_back(slice.loadgen->tps);
  }
  if (tps.size() < 3) return {};
  std::nth_element(tps.begin(), tps.begin() + static_cast<long>(tps.size() / 2), tps.end());
  const double median = tps[tps.size() / 2];
  if (median <= 0) return {};

  std::vector<Stall> stalls;
  Profile stalled;          // the client backends' waits over the current stall
  Background background;    // what ran in the background during it
  double tps_sum = 0;
  int intervals = 0;
  auto close = [&] {
    if (intervals == 0) return;
    Stall& stall = stalls.back();
    stall.tps = tps_sum / intervals;
    const double snapshots = static_cast<double>(std::max<uint64_t>(stalled.snapshots(), 1));
    std::vector<std::pair<uint64_t, std::string>> waits;
    uint64_t clients = 0;
    for (const auto& [key, count] : stalled.counts()) {
      if (!is_client_load(key)) continue;
      clients += count;
      waits.emplace_back(count, display_name(key));
    }
    // The same display name can appear under several states: merge them.
    std::map<std::string, uint64_t> merged;
    for (const auto& [count, name] : waits) merged[name] += count;
    for (const auto& [name, count] : merged) {
      stall.waits.push_back({name, static_cast<double>(count) / snapshots});
    }
    std::sort(stall.waits.begin(), stall.waits.end(),
              [](const StallWait& a, const StallWait& b) { return a.backends > b.backends; });
    if (stall.waits.size() > 3) stall.waits.resize(3);
    stall.client_backends = static_cast<double>(clients) / snapshots;
    stall.background = background.flags();
    stalled = Profile{};
    background = Background{};
    tps_sum = 0;
    intervals = 0;
  };
  for (const auto& slice : timeline) {
    const bool stalled_now = slice.loadgen && std::isfinite(slice.loadgen->tps) &&
                             slice.loadgen->tps < fraction * median;
    if (!stalled_now) {
      close();
      continue;
    }
    if (intervals == 0) stalls.push_back(Stall{slice.start_s, 0, 0, median, 0, {}, {}});
    stalls.back().duration_s = slice.start_s + slice.duration_s - stalls.back().start_s;
    stalled.merge(slice.profile);
    background.autovacuum |= slice.background.autovacuum;
    background.checkpoint |= slice.background.checkpoint;
    background.manual_vacuum |= slice.background.manual_vacuum;
    tps_sum += slice.loadgen->tps;
    ++intervals;
  }
  close();
  return stalls;
}

}  // namespace pgwaitprof::model
