// What a run's values say in words and names: its status and metrics by name, tags, where its
// throughput came from, and the one-line summaries of its work, outages, lock blockers and
// stalls. (The report.json codec is run.cc.)
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "model/run.h"

namespace pgwaitprof::model {

std::string_view to_string(RunStatus status) {
  switch (status) {
    case RunStatus::kCompleted:
      return "completed";
    case RunStatus::kInterrupted:
      return "interrupted";
    case RunStatus::kFailed:
      return "failed";
  }
  return "failed";
}

std::optional<RunStatus> parse_run_status(std::string_view text) {
  for (const auto status : {RunStatus::kCompleted, RunStatus::kInterrupted, RunStatus::kFailed}) {
    if (to_string(status) == text) return status;
  }
  return std::nullopt;
}

std::string_view to_string(Metric metric) {
  return metric == Metric::kDuration ? "duration" : "tps";
}

std::optional<Metric> parse_metric(std::string_view text) {
  if (text == "tps") return Metric::kTps;
  if (text == "duration") return Metric::kDuration;
  return std::nullopt;
}

std::optional<double> run_figure(const Run& run, Metric metric) {
  if (metric == Metric::kDuration) {
    if (run.work && run.work->elapsed > base::Seconds(0)) return run.work->elapsed.count();
    return std::nullopt;
  }
  if (run.loadgen) return run.loadgen->tps;
  return std::nullopt;
}

base::Expected<std::pair<std::string, std::string>> parse_tag(std::string_view text) {
  const auto equals = text.find('=');
  if (equals == std::string_view::npos) return base::Error{"expected KEY=VALUE"};
  const auto key = text.substr(0, equals);
  const auto value = text.substr(equals + 1);
  const auto key_character = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '-';
  };
  if (key.empty() || key.size() > 64 || !std::all_of(key.begin(), key.end(), key_character)) {
    return base::Error{"the key must be 1 to 64 letters, digits, '_', '.' or '-'"};
  }
  if (value.size() > 200) return base::Error{"the value is longer than 200 bytes"};
  return std::pair{std::string(key), std::string(value)};
}

std::string tags_text(const std::map<std::string, std::string>& tags) {
  std::string text;
  for (const auto& [key, value] : tags) {
    text += fmt::format("{}{}={}", text.empty() ? "" : ", ", key, value);
  }
  return text;
}

std::string throughput_source_text(const Run& run) {
  if (run.throughput_source == "server") {
    return "the server: pg_stat_database, xact_commit + xact_rollback per second of every "
           "database, pgwaitprof's own statements excluded";
  }
  if (run.throughput_source == "sysbench") {
    return "sysbench's reports (--report-interval), the server's pg_stat_database beside them";
  }
  return "pgbench's progress reports (-P)" +
         std::string(run.throughput_source.empty() ? ""
                                                   : ", the server's pg_stat_database beside them");
}

std::string WorkDone::summary() const {
  std::string text;
  if (rows > 0) {
    text = fmt::format("{} rows", rows);
  } else {
    text = fmt::format("{} transactions", transactions);
  }
  const double elapsed_s = elapsed.count();
  text += fmt::format(" in {:.2f} s", elapsed_s);
  if (elapsed_s <= 0) return text;
  if (rows > 0) {
    text += fmt::format(": {:.0f} rows/s", static_cast<double>(rows) / elapsed_s);
  } else if (transactions > 0) {
    text += fmt::format(": {:.1f} tps", static_cast<double>(transactions) / elapsed_s);
  }
  if (bytes > 0) text += fmt::format(", {:.1f} MB/s", static_cast<double>(bytes) / 1e6 / elapsed_s);
  return text;
}

std::string Outage::summary() const {
  if (connection == kRunConnection) {
    return fmt::format(
        "{:.1f}-{:.1f} s: the run's own connection was down for {:.1f} s (no server tps and no "
        "background activity meanwhile){}",
        start.count(), (start + duration).count(), duration.count(),
        reason.empty() ? "" : " (" + reason + ")");
  }
  return fmt::format("{:.1f}-{:.1f} s: sampler disconnected for {:.1f} s, {} ticks missed{}",
                     start.count(), (start + duration).count(), duration.count(), missed_ticks,
                     reason.empty() ? "" : " (" + reason + ")");
}

std::string LockBlocker::who() const {
  if (!prepared.empty()) {
    std::string text = fmt::format("prepared transaction '{}'", prepared);
    if (max_xact_age >= base::Seconds(0)) {
      text += fmt::format(", prepared {:.1f} s ago", max_xact_age.count());
    }
    if (!prepared_by.empty()) text += ", by " + prepared_by;
    return text;
  }
  const std::string& program =
      blocker_application.empty() ? blocker_backend_type : blocker_application;
  return blockers == 1 ? fmt::format("pid {} ({})", example_blocker_pid, program)
                       : fmt::format("{} backends ({})", blockers, program);
}

std::string LockBlocker::description() const {
  const std::string& shown = object.empty() && blockers == 1 ? example_object : object;
  std::string text = shown.empty() ? lock_type : fmt::format("{} \"{}\"", lock_type, shown);
  if (!prepared.empty()) {
    text += ", blocked by " + who();
    if (chain_depth > 1) text += fmt::format(" at the end of a chain of {}", chain_depth);
    return text;
  }
  text += blockers == 1 ? fmt::format(", blocked by pid {} (", example_blocker_pid)
                        : fmt::format(", blocked by {} backends (e.g. pid {}, ", blockers,
                                      example_blocker_pid);
  text += blocker_application.empty() ? blocker_backend_type : blocker_application;
  if (!blocker_state.empty()) text += ", " + blocker_state;
  if (max_xact_age >= base::Seconds(0)) text += fmt::format(" {:.1f} s", max_xact_age.count());
  text += ")";
  if (chain_depth > 1) text += fmt::format(" at the end of a chain of {}", chain_depth);
  if (!blocker_statement.empty()) text += ": " + blocker_statement;
  return text;
}

std::string Stall::summary() const {
  std::string text = fmt::format("{:.0f} s: {:.0f} tps", start.count(), tps);
  if (duration > base::Seconds(1.5))
    text =
        fmt::format("{:.0f}-{:.0f} s: {:.0f} tps", start.count(), (start + duration).count(), tps);
  if (!waits.empty()) {
    // A lock wait names its object and who held it (the blocker description starts with the
    // lock type, as the wait name ends with it).
    const bool blocked = !blocker.empty() && waits.front().wait.starts_with("Lock | ");
    text += fmt::format(", {:.0f}/{:.0f} backends on {}", waits.front().backends, client_backends,
                        blocked ? "Lock | " + blocker : waits.front().wait);
  }
  // Reports before schema 10 compared with the median; a stall over most of the run leaves no
  // steady level to name.
  if (steady_tps > 0) {
    text += fmt::format(" (steady {:.0f} tps)", steady_tps);
  } else if (median_tps > 0) {
    text += fmt::format(" (median {:.0f} tps)", median_tps);
  }
  if (std::isfinite(max_latency.count())) {
    text += fmt::format(", max latency {:.1f} ms", max_latency.count());
  }
  if (!background.empty()) text += " [" + background + "]";
  return text;
}

}  // namespace pgwaitprof::model
