// What reading pgbench's per-transaction log costs pgwaitprof: streams the log files of one
// pgbench run (PREFIX, e.g. /tmp/logs/pgbench_log) through the same reader a run uses and prints
// the lines, bytes, seconds, throughput and peak RSS, and the run's percentiles. Not a test: it
// prints figures (tests/perf/txlog_cost.sh runs it on the log of its last pair).
#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <string>

#include "loadgen/pgbench_log.h"

namespace {

using namespace pgwaitprof;

// The earliest transaction end among the files' first lines: interval 0 starts there.
std::chrono::system_clock::time_point first_end(const std::vector<std::filesystem::path>& files) {
  std::optional<std::chrono::sys_time<std::chrono::microseconds>> earliest;
  for (const auto& path : files) {
    std::ifstream file(path);
    std::string line;
    if (!std::getline(file, line)) continue;
    if (const auto transaction = loadgen::parse_log_line(line, {})) {
      if (!earliest || transaction->end < *earliest) earliest = transaction->end;
    }
  }
  return earliest ? std::chrono::system_clock::time_point(*earliest)
                  : std::chrono::system_clock::time_point{};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: pgwaitprof_txlog_read PREFIX\n");
    return 2;
  }
  std::error_code error;
  const auto files = loadgen::list_log_files(argv[1], error);
  if (files.empty()) {
    fmt::print(stderr, "pgwaitprof_txlog_read: no log files for prefix \"{}\"\n", argv[1]);
    return 1;
  }
  const auto paths = loadgen::paths_of(files);
  uintmax_t bytes = 0;
  for (const auto& path : paths) bytes += std::filesystem::file_size(path);
  loadgen::LatencyTimelineOptions options;
  options.start = first_end(paths);
  const auto started = std::chrono::steady_clock::now();
  const auto timeline = loadgen::read_latency_timeline(paths, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto lines = timeline.lines;
  fmt::print(
      "txlog read: {} files, {} lines, {:.1f} MB in {:.3f} s: {:.0f} lines/s, {:.0f} MB/s, peak "
      "RSS {:.1f} MiB; {} intervals; p50 {:.3f} p99 {:.3f} max {:.3f} ms; {} unparsable\n",
      paths.size(), lines, static_cast<double>(bytes) / 1e6, seconds,
      static_cast<double>(lines) / seconds, static_cast<double>(bytes) / 1e6 / seconds,
      static_cast<double>(usage.ru_maxrss) / 1024, timeline.intervals.size(),
      timeline.run.p50.count(), timeline.run.p99.count(), timeline.run.max.count(),
      timeline.unparsable_lines);
  return 0;
}
