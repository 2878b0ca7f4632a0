// The remote sampler's messages: a sink's calls encoded on one host and delivered on another
// arrive as they were made, their times moved by the clocks' offset.
#include "store/sample_wire.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/wait_key.h"

namespace pgwaitprof::store {
namespace {

using namespace std::chrono_literals;

// Times cross as whole microseconds.
template <typename TimePoint>
bool same_microsecond(TimePoint a, TimePoint b) {
  return std::chrono::abs(a - b) < 1us;
}

struct Recording : model::SampleSink {
  std::vector<model::Snapshot> snapshots;
  std::vector<model::KernelTimes> kernel;
  std::vector<std::pair<bool, model::SteadyClock::time_point>> states;
  std::string reason;
  model::SamplerSource source = model::SamplerSource::kAuto;
  void on_snapshot(const model::Snapshot& snapshot) override { snapshots.push_back(snapshot); }
  void on_profile_delta(const model::Profile&, model::SystemClock::time_point) override {}
  void on_kernel_times(const model::KernelTimes& times) override { kernel.push_back(times); }
  void on_connection_state(bool up, model::SteadyClock::time_point at,
                           std::string_view why) override {
    states.emplace_back(up, at);
    reason = why;
  }
  void on_source(model::SamplerSource used, std::string_view why) override {
    source = used;
    reason = why;
  }
};

TEST(SampleWire, SnapshotsKernelTimesAndStatesCrossWithTheOffset) {
  // The remote host: its clock 1.5 s ahead of this one's.
  WireClock remote;
  remote.system = remote.system + 1500ms;
  std::vector<std::string> messages;
  WireSink sink(remote, [&](std::string message) { messages.push_back(std::move(message)); });

  model::Snapshot snapshot;
  snapshot.taken_at = remote.system;
  snapshot.taken_at_steady = remote.steady + 200ms;
  snapshot.all_states = true;
  model::BackendSample backend;
  backend.pid = 42;
  backend.backend_type = "client backend";
  backend.state = "active";
  backend.wait_event_type = "LWLock";
  backend.wait_event = "WALWrite";
  backend.query_id = -7;
  backend.kernel_state = 'R';
  snapshot.backends.push_back(backend);
  sink.on_snapshot(snapshot);
  model::KernelTimes times;
  times.from = remote.steady;
  times.to = remote.steady + 1s;
  times.by_group[model::kClientBackends] = {0.5s, 0.25s, 1s};
  sink.on_kernel_times(times);
  sink.on_source(model::SamplerSource::kMemory, "local server, read as root");
  sink.on_connection_state(false, remote.steady + 2s, "server closed the connection");

  WireClock local;
  local.steady = remote.steady;  // the same instant on both hosts
  local.system = remote.system - 1500ms;
  local.offset = 1500ms;
  Recording recording;
  for (const auto& message : messages) {
    auto parsed = parse_message(message);
    ASSERT_TRUE(parsed);
    EXPECT_TRUE(deliver_message(parsed->first, parsed->second, local, recording));
  }
  ASSERT_EQ(recording.snapshots.size(), 1U);
  const auto& got = recording.snapshots.front();
  EXPECT_TRUE(same_microsecond(got.taken_at, local.system));
  EXPECT_TRUE(same_microsecond(got.taken_at_steady, local.steady + 200ms));
  EXPECT_TRUE(got.all_states);
  ASSERT_EQ(got.backends.size(), 1U);
  EXPECT_EQ(got.backends[0].pid, 42);
  EXPECT_EQ(got.backends[0].query_id, -7);
  EXPECT_EQ(got.backends[0].kernel_state, 'R');
  ASSERT_NE(model::key_of(got.backends[0]), nullptr);  // keys assigned on arrival
  ASSERT_EQ(recording.kernel.size(), 1U);
  EXPECT_LT(std::chrono::abs(recording.kernel[0].to - recording.kernel[0].from - 1s), 1us);
  EXPECT_EQ(recording.kernel[0].by_group[model::kClientBackends].runqueue, base::Seconds(0.25));
  EXPECT_EQ(recording.source, model::SamplerSource::kMemory);
  ASSERT_EQ(recording.states.size(), 1U);
  EXPECT_FALSE(recording.states[0].first);
  EXPECT_TRUE(same_microsecond(recording.states[0].second, local.steady + 2s));
  EXPECT_EQ(recording.reason, "server closed the connection");
}

TEST(SampleWire, StartCarriesTheTargetAndHelloItsVersion) {
  collectors::SamplerOptions options;
  options.conninfo = "host=10.200.0.2 password=secret";
  options.hz = 250;
  options.source = model::SamplerSource::kMemory;
  auto parsed = parse_message(start_message(options, "from-pgpass"));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->second.value("pgpassword", ""), "from-pgpass");
  parsed->second.erase("pgpassword");  // parse_start would put it in this process's PGPASSWORD
  const auto back = parse_start(parsed->second);
  EXPECT_EQ(back.conninfo, options.conninfo);
  EXPECT_EQ(back.hz, 250);
  EXPECT_EQ(back.source, model::SamplerSource::kMemory);
  const auto hello = parse_hello(hello_message({kRemoteProtocolVersion, "9.9.9"}));
  ASSERT_TRUE(hello);
  EXPECT_EQ(hello->protocol, kRemoteProtocolVersion);
  EXPECT_EQ(hello->version, "9.9.9");
  EXPECT_FALSE(parse_hello("not json"));
}

TEST(SampleWire, CpuStartCarriesTheRateAndTheAnswerSaysWhyNot) {
  auto start = parse_message(cpu_start_message(99));
  ASSERT_TRUE(start);
  EXPECT_EQ(start->first, "cpu_start");
  EXPECT_EQ(cpu_start_hz(start->second), 99);
  // The start of the sampling asks for no CPU profile: a run does, when its collector opens.
  EXPECT_FALSE(parse_message(start_message({}, ""))->second.contains("cpu_profile_hz"));
  EXPECT_EQ(parse_message(cpu_stop_message())->first, "cpu_stop");
  auto refused = parse_message(cpu_profile_message("perf_event_paranoid is 3"));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->first, "cpu_profile");
  EXPECT_EQ(cpu_profile_refusal(refused->second), "perf_event_paranoid is 3");
  EXPECT_EQ(cpu_profile_refusal(parse_message(cpu_profile_message(""))->second), "");
}

TEST(SampleWire, CpuBatchesCrossWithTheirFramesAndTheOffset) {
  WireClock remote;
  remote.system = remote.system + 1500ms;
  model::CpuSampleBatch batch{99, 4, 3, {}, {"kernel.kptr_restrict is 1"}};
  batch.samples.push_back(
      {"client backend",
       remote.steady + 10ms,
       {"main", "PostgresMain", "exec_simple_query", "finish_task_switch_[k]"}});
  batch.samples.push_back({"walwriter", remote.steady + 20ms, {"main", "WalWriterMain"}});
  batch.samples.push_back({"client backend", remote.steady + 30ms, {}});
  auto parsed = parse_message(cpu_message(batch, remote.steady + 40ms, remote));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->first, "cpu");
  // "main" and "client backend" cross once each.
  EXPECT_EQ(parsed->second.at("names").size(), 7U);

  WireClock local;
  local.steady = remote.steady;
  local.system = remote.system - 1500ms;
  local.offset = 1500ms;
  const auto got = cpu_batch_from(parsed->second, local);
  EXPECT_TRUE(same_microsecond(cpu_batch_drained_at(parsed->second, local), local.steady + 40ms));
  EXPECT_EQ(got.hz, 99);
  EXPECT_EQ(got.cpus, 4);
  EXPECT_EQ(got.lost, 3U);
  EXPECT_EQ(got.notes, batch.notes);
  ASSERT_EQ(got.samples.size(), 3U);
  for (size_t index = 0; index < got.samples.size(); ++index) {
    EXPECT_EQ(got.samples[index].backend_type, batch.samples[index].backend_type);
    EXPECT_EQ(got.samples[index].frames, batch.samples[index].frames);
    EXPECT_TRUE(same_microsecond(got.samples[index].at, batch.samples[index].at));
  }
}

}  // namespace
}  // namespace pgwaitprof::store
