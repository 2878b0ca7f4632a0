// The facts the text and Markdown reports both state: the header and environment lines, the
// profile table's title, heading and column width, and the timeline's legend.
#include "exporters/render/report_facts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "exporters/render/text_format.h"

namespace pgwaitprof::exporters::report_detail {

using namespace text_format;

std::string percent(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

// Fixed decimals, or "-" for a value pgbench printed as -nan.
std::string number_or_dash(double value, int decimals) {
  return std::isfinite(value) ? fmt::format("{:.{}f}", value, decimals) : "-";
}

size_t label_width(const std::vector<std::string>& labels, std::string_view title) {
  size_t width = std::max<size_t>(32, display_width(title));
  for (const auto& label : labels) width = std::max(width, display_width(label));
  return width;
}

std::string profile_title(const ProfileTable& table, const RenderOptions& options) {
  return options.by == GroupBy::kWaitEvent ? std::string("wait events")
                                           : fmt::format("wait events by {}", table.dimension);
}

std::string profile_heading(const model::Run& run, const ProfileTable& table,
                            const RenderOptions& options) {
  std::string heading;
  if (run.profile.exact()) {
    // The traced source: its counts and snapshots are microseconds.
    heading = fmt::format("{:.3f} s of the server's time traced in {:.3f} s, exact",
                          static_cast<double>(table.total) * 1e-6,
                          static_cast<double>(table.snapshots) * 1e-6);
  } else {
    heading = fmt::format("{} samples in {} snapshots", table.total, table.snapshots);
    if (run.sampler.achieved_hz > 0) {
      heading += fmt::format(" at {:.1f} Hz", run.sampler.achieved_hz);
    }
  }
  if (options.by != GroupBy::kQueryId) {
    heading += options.include_idle ? ", idle sessions included" : ", idle sessions not counted";
  }
  return heading;
}

std::string workload_line(const model::Run& run) {
  std::string line = run.workload.empty() ? "-" : run.workload;
  if (run.clients > 0) line += fmt::format(", {} clients", run.clients);
  if (!run.variant.empty()) line += fmt::format(", variant {}", run.variant);
  if (run.repeat > 0) line += fmt::format(", repeat {}", run.repeat);
  return line;
}

std::vector<std::pair<std::string, std::string>> header_facts(const model::Run& run,
                                                              const model::Summary& summary) {
  std::vector<std::pair<std::string, std::string>> facts = {
      {"status", std::string(to_string(run.status))},
      {"target", run.target},
      {"workload", workload_line(run)},
      {"command", shell_join(run.loadgen_argv)},
  };
  if (!run.tags.empty()) facts.emplace_back("tags", model::tags_text(run.tags));
  if (run.loadgen_exit_code != 0) {
    facts.emplace_back("exit code", fmt::format("{}", run.loadgen_exit_code));
  }
  facts.emplace_back("started", run.started_at);
  facts.emplace_back("ended", run.ended_at);
  facts.emplace_back("duration", fmt::format("{:.1f} s", run.duration.count()));
  // A fixed-work run is judged by how long its work took, not by its rate of transactions.
  if (run.work) {
    facts.emplace_back("work", run.work->summary());
  } else if (auto tps = tps_headline_text(summary.tps, summary.window); !tps.empty()) {
    facts.emplace_back("tps", tps);
  }
  if (!run.throughput_source.empty()) {
    facts.emplace_back("tps from", model::throughput_source_text(run));
  }
  if (run.checkpoint_after) {
    facts.emplace_back("checkpoint after",
                       fmt::format("{:.2f} s{}", run.checkpoint_after->duration.count(),
                                   run.checkpoint_after->error.empty() ? "" : " (failed)"));
  }
  if (auto latency = latency_percentiles_text(run); !latency.empty()) {
    facts.emplace_back("latency", latency);
  }
  facts.emplace_back("sampler", sampler_line(run.sampler));
  if (auto check = kernel_check_line(run, summary); !check.empty()) {
    facts.emplace_back("check", std::move(check));
  }
  return facts;
}

std::vector<std::pair<std::string, std::string>> environment_facts(const model::Environment& env) {
  std::vector<std::pair<std::string, std::string>> facts;
  if (!env.server_version.empty()) facts.emplace_back("server", env.server_version);
  if (env.data_checksums) facts.emplace_back("checksums", *env.data_checksums ? "on" : "off");
  if (!env.hostname.empty()) facts.emplace_back("host", env.hostname);
  if (!env.kernel.empty()) facts.emplace_back("kernel", env.kernel);
  if (env.cpu_count > 0 || !env.cpu_model.empty()) {
    facts.emplace_back("cpu", fmt::format("{} x {}", env.cpu_count, env.cpu_model));
  }
  if (env.memory_bytes > 0) facts.emplace_back("memory", format_bytes(env.memory_bytes));
  if (const auto& remote = env.sampler_host) {
    // Above: the load generator's host; here the server's, where the sampler ran.
    facts.emplace_back("sampler host", fmt::format("{} ({})", remote->hostname, remote->address));
    facts.emplace_back("sampler kernel", remote->kernel);
    facts.emplace_back("sampler cpu", fmt::format("{} x {}", remote->cpu_count, remote->cpu_model));
    facts.emplace_back("sampler memory", format_bytes(remote->memory_bytes));
    facts.emplace_back("sampler pgwaitprof", remote->program_version);
    facts.emplace_back("clock offset",
                       fmt::format("{:+.3f} ms (the sampler host's clock minus this host's; "
                                   "its error at most half the round trip)",
                                   remote->clock_offset_ms));
    facts.emplace_back("round trip", fmt::format("{:.3f} ms (SSH channel, fastest of {} pings)",
                                                 remote->round_trip_ms, 5));
  }
  return facts;
}

std::string timeline_legend(const model::Run& run) {
  std::string legend = fmt::format(
      "{} s intervals; AAS per wait class, idle sessions not counted; host CPU %; "
      "lg = load generator cores",
      format_seconds(run.interval.count()));
  const bool spread = std::any_of(run.timeline.begin(), run.timeline.end(), [&](const auto& slice) {
    return slice.server_tps_spread && run.throughput_source != "server";
  });
  if (spread)
    legend += "; ~ srv tps: one reading of the server spread over the intervals it covers";
  return legend;
}

}  // namespace pgwaitprof::exporters::report_detail
