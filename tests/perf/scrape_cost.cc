// What a /metrics scrape costs when every wait event is present: a continuous profile fed
// snapshots in which client backends (active and idle in transaction) and background workers
// show every wait event PostgreSQL 15 can report, so every series and wait-length histogram
// exists. Prints the series count and the in-process cost of building and serializing the
// families (what the exposer does per scrape), then serves them on --listen for --serve
// seconds so tests/perf/suite.sh can time real HTTP scrapes. A figure, not a test.
#include <fmt/format.h>
#include <prometheus/text_serializer.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "exporters/prometheus/prometheus_exporter.h"
#include "model/continuous_profile.h"
#include "model/wait_events.h"

namespace {

using namespace pgwaitprof;
using Clock = std::chrono::steady_clock;

// Every PostgreSQL 15 wait event, each in three kinds of backend, over consecutive snapshots
// so the wait tracker completes waits of every event.
std::shared_ptr<const model::TargetMetrics> every_wait_event() {
  model::ContinuousProfile profile("local", model::SamplerSource::kActivity, 1000);
  std::vector<model::BackendSample> backends;
  int pid = 1000;
  for (const auto& info : model::wait_event_reference()) {
    if (info.origin != model::WaitEventOrigin::kCore || !model::exists_in(info, 15)) continue;
    const auto name = model::reported_name(info, 15);
    if (!name) continue;
    for (const auto& [backend_type, state] :
         {std::pair{"client backend", "active"}, std::pair{"client backend", "idle in transaction"},
          std::pair{"autovacuum worker", ""}}) {
      model::BackendSample backend;
      backend.pid = ++pid;
      backend.backend_type = backend_type;
      backend.state = state;
      backend.wait_event_type = std::string(name->type);
      backend.wait_event = std::string(name->name);
      backends.push_back(backend);
    }
  }
  model::Snapshot snapshot;
  auto at = Clock::now();
  // Waiting, then on a CPU: every wait completes and lands in its histogram.
  for (int round = 0; round < 4; ++round) {
    snapshot.backends = backends;
    if (round % 2 == 1) {
      for (auto& backend : snapshot.backends) backend.wait_event_type.clear();
    }
    snapshot.taken_at = model::SystemClock::now();
    snapshot.taken_at_steady = at += std::chrono::milliseconds(1);
    snapshot.query_duration = std::chrono::microseconds(300);
    profile.on_snapshot(snapshot);
  }
  profile.publish();
  return profile.published();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("pgwaitprof /metrics cost with every wait event present");
  int serve_s = 0;
  std::string listen = "127.0.0.1:9199";
  int repeats = 200;
  app.add_option("--serve", serve_s, "serve /metrics for this many seconds after measuring");
  app.add_option("--listen", listen, "host:port to serve on");
  app.add_option("--repeats", repeats, "in-process serializations to time")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  const auto metrics = every_wait_event();
  const exporters::TargetMetricsList targets{metrics};
  std::vector<double> micros;
  size_t bytes = 0, series = 0;
  for (int repeat = 0; repeat < repeats; ++repeat) {
    const auto started = Clock::now();
    const auto families = exporters::build_metric_families(targets);
    const auto text = prometheus::TextSerializer().Serialize(families);
    micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - started).count());
    bytes = text.size();
    // Every line that is not a comment is one series (histogram buckets included).
    series = 0;
    for (size_t start = 0; start < text.size();) {
      const size_t end = std::min(text.find('\n', start), text.size());
      if (end > start && text[start] != '#') ++series;
      start = end + 1;
    }
  }
  std::sort(micros.begin(), micros.end());
  fmt::print("wait_keys {}\n", metrics->wait_samples.size());
  fmt::print("series {}\n", series);
  fmt::print("body_bytes {}\n", bytes);
  fmt::print("serialize_p50_ms {:.3f}\n", micros[micros.size() / 2] / 1000);
  fmt::print("serialize_max_ms {:.3f}\n", micros.back() / 1000);
  std::fflush(stdout);
  if (serve_s <= 0) return 0;
  exporters::MetricsServer server(
      listen, [&targets] { return targets; }, "bench", "bench");
  fmt::print("listening {}\n", server.listen());
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::seconds(serve_s));
  return 0;
}
