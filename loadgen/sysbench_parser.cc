// Parsing sysbench's interval reports and summary.
#include "loadgen/sysbench_parser.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace pgwaitprof::loadgen {
namespace {

// The number that follows `key` in `line` (after spaces), if any.
std::optional<double> number_after(std::string_view line, std::string_view key) {
  const auto at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  auto rest = line.substr(at + key.size());
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  double value = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
  if (error != std::errc() || end == rest.data()) return std::nullopt;
  return value;
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

}  // namespace

std::optional<model::LoadgenProgress> parse_sysbench_progress(std::string_view line,
                                                              double interval_s) {
  line = trimmed(line);
  if (!line.starts_with("[ ")) return std::nullopt;
  const auto close = line.find("s ]");
  if (close == std::string_view::npos) return std::nullopt;
  const auto elapsed = number_after(line.substr(0, close), "[");
  const auto tps = number_after(line, " tps:");
  if (!elapsed || !tps) return std::nullopt;
  model::LoadgenProgress progress;
  progress.elapsed = base::Seconds(*elapsed);
  progress.tps = *tps;
  progress.latency_avg = base::Milliseconds(std::numeric_limits<double>::quiet_NaN());
  progress.latency_stddev = base::Milliseconds(std::numeric_limits<double>::quiet_NaN());
  progress.qps = number_after(line, " qps:");
  // "lat (ms,95%): 11.45"
  if (const auto lat = line.find("lat (ms,"); lat != std::string_view::npos) {
    const auto percent = line.find("%):", lat);
    if (percent != std::string_view::npos) {
      progress.latency_percentile = number_after(line.substr(lat), "lat (ms,").value_or(0);
      progress.latency_at_percentile =
          std::optional<base::Milliseconds>(number_after(line.substr(percent), "%):"));
    }
  }
  if (const auto errors = number_after(line, " err/s:")) {
    progress.failed = static_cast<uint64_t>(std::llround(*errors * interval_s));
  }
  return progress;
}

std::optional<model::LoadgenSummary> parse_sysbench_summary(std::string_view output,
                                                            std::string_view test) {
  model::LoadgenSummary summary;
  bool transactions_seen = false;
  bool in_latency = false;
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string_view::npos) end = output.size();
    const auto line = trimmed(output.substr(start, end - start));
    start = end + 1;
    if (line.starts_with("Latency (ms):")) {
      in_latency = true;
      continue;
    }
    if (line.starts_with("Threads fairness:") || line.starts_with("General statistics:")) {
      in_latency = false;
    }
    if (line.starts_with("Number of threads:")) {
      summary.clients = static_cast<int>(number_after(line, "Number of threads:").value_or(0));
      summary.threads = summary.clients;
    } else if (line.starts_with("transactions:")) {
      // "transactions:                        994    (99.18 per sec.)"
      const auto count = number_after(line, "transactions:");
      const auto rate = number_after(line, "(");
      if (count && rate) {
        summary.transactions = static_cast<uint64_t>(*count);
        summary.tps = *rate;
        transactions_seen = true;
      }
    } else if (line.starts_with("queries:")) {
      summary.qps = number_after(line, "(");
    } else if (line.starts_with("ignored errors:")) {
      summary.failed = static_cast<uint64_t>(number_after(line, "ignored errors:").value_or(0));
    } else if (line.starts_with("total time:")) {
      summary.duration = std::optional<base::Seconds>(number_after(line, "total time:"));
    } else if (in_latency && line.starts_with("avg:")) {
      summary.latency_avg = base::Milliseconds(number_after(line, "avg:").value_or(0));
    } else if (in_latency && line.find("th percentile:") != std::string_view::npos) {
      summary.latency_percentile = number_after(line, "").value_or(0);
      summary.latency_at_percentile =
          std::optional<base::Milliseconds>(number_after(line, "percentile:"));
    }
  }
  if (!transactions_seen) return std::nullopt;
  summary.transaction_type = "sysbench " + std::string(test);
  return summary;
}

}  // namespace pgwaitprof::loadgen
