// The on-CPU profile: folding (flamegraph.pl's format), self counts per group with the kernel
// told apart, the client backends' top functions per interval, the recorder's part, and the
// report.json codec.
#include "model/cpu_profile.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/run.h"
#include "model/run_recorder.h"

namespace pgwaitprof::model {
namespace {

using std::chrono::milliseconds;

const SteadyClock::time_point kStart{std::chrono::seconds(1000)};

CpuSample sample(std::string type, int at_ms, std::vector<std::string> frames) {
  return {std::move(type), kStart + milliseconds(at_ms), std::move(frames)};
}

// Two seconds of a parser-bound client backend, then a second of hash lookups; a walwriter in
// the kernel throughout.
CpuSampleBatch batch() {
  CpuSampleBatch batch{99, 2, 3, {}, {}};
  const std::vector<std::string> parse{"main", "PostgresMain", "exec_simple_query", "raw_parser",
                                       "base_yyparse"};
  const std::vector<std::string> hash{"main", "PostgresMain", "exec_simple_query",
                                      "hash_search_with_hash_value"};
  for (int at = 0; at < 2000; at += 100)
    batch.samples.push_back(sample("client backend", at, parse));
  for (int at = 2000; at < 3000; at += 50)
    batch.samples.push_back(sample("client backend", at, hash));
  for (int at = 0; at < 3000; at += 500) {
    batch.samples.push_back(
        sample("walwriter", at,
               {"main", "XLogBackgroundFlush", "do_syscall_64_[k]", "finish_task_switch_[k]"}));
  }
  return batch;
}

CpuProfile built() {
  CpuProfileBuilder builder;
  builder.add(batch(), [](SteadyClock::time_point at) {
    return static_cast<size_t>((at - kStart) / std::chrono::seconds(1));
  });
  return builder.profile(base::Seconds(3));
}

TEST(CpuProfile, FramesFoldRootFirstAndKernelFramesAreMarked) {
  EXPECT_EQ(fold_frames({"main", "a;b", "c_[k]"}), "main;a:b;c_[k]");
  EXPECT_EQ(fold_frames({}), "[unknown]");
  EXPECT_TRUE(is_kernel_frame("finish_task_switch_[k]"));
  EXPECT_FALSE(is_kernel_frame("base_yyparse"));
  EXPECT_EQ(frame_function("finish_task_switch_[k]"), (CpuFunction{"finish_task_switch", true, 0}));
  EXPECT_EQ(frame_function("[postgres+0x1a2b3]"), (CpuFunction{"[postgres+0x1a2b3]", false, 0}));
}

TEST(CpuProfile, GroupsCountFoldedStacksAndSelfFunctions) {
  const auto profile = built();
  EXPECT_EQ(profile.hz, 99);
  EXPECT_EQ(profile.cpus, 2);
  EXPECT_EQ(profile.lost, 3u);
  EXPECT_EQ(profile.samples, 20u + 20u + 6u);
  ASSERT_EQ(profile.groups.size(), 2u);
  const auto& client = profile.groups.at("client backend");
  EXPECT_EQ(client.samples, 40u);
  EXPECT_EQ(client.folded.at("main;PostgresMain;exec_simple_query;raw_parser;base_yyparse"), 20u);
  ASSERT_EQ(client.self.size(), 2u);
  // Equal counts: by name.
  EXPECT_EQ(client.self[0], (CpuFunction{"base_yyparse", false, 20}));
  EXPECT_EQ(client.self[1], (CpuFunction{"hash_search_with_hash_value", false, 20}));
  const auto& walwriter = profile.groups.at("walwriter");
  ASSERT_EQ(walwriter.self.size(), 1u);
  EXPECT_EQ(walwriter.self[0], (CpuFunction{"finish_task_switch", true, 6}));
  EXPECT_EQ(folded_text(walwriter),
            "main;XLogBackgroundFlush;do_syscall_64_[k];finish_task_switch_[k] 6\n");
  EXPECT_DOUBLE_EQ(cpu_aas(client.samples, profile), 40.0 / (99 * 3));
}

TEST(CpuProfile, IntervalsHoldTheClientBackendsTopFunctions) {
  const auto profile = built();
  ASSERT_EQ(profile.intervals.size(), 3u);
  EXPECT_EQ(profile.intervals.at(0).client_samples, 10u);
  EXPECT_EQ(profile.intervals.at(0).top, (std::vector<CpuFunction>{{"base_yyparse", false, 10}}));
  EXPECT_EQ(profile.intervals.at(2).top,
            (std::vector<CpuFunction>{{"hash_search_with_hash_value", false, 20}}));
}

// An interval keeps its own top functions and the run's top kCpuRunTracked where they ran in it:
// interval 0 has f0-f39 (f39 the largest), interval 1 only f0 (outside the run's top) and f39.
TEST(CpuProfile, IntervalsKeepTheirTopAndTheRunsTopFunctions) {
  CpuProfileBuilder builder;
  for (int function = 0; function < 40; ++function) {
    for (int count = 0; count <= function; ++count) {
      builder.add_sample(sample("client backend", 0, {"f" + std::to_string(function)}), 0);
    }
  }
  for (const char* function : {"f0", "f39"}) {
    builder.add_sample(sample("client backend", 0, {function}), 1);
  }
  const auto profile = builder.profile(base::Seconds(2));
  const auto& first = profile.intervals.at(0).top;
  ASSERT_EQ(first.size(), kCpuRunTracked);
  EXPECT_EQ(first.front(), (CpuFunction{"f39", false, 40}));
  EXPECT_EQ(first.back(), (CpuFunction{"f10", false, 11}));
  // Its own top: f0 too, though the run's top 30 leaves it out.
  EXPECT_EQ(profile.intervals.at(1).top,
            (std::vector<CpuFunction>{{"f0", false, 1}, {"f39", false, 1}}));
}

TEST(CpuProfile, CodecRoundTrips) {
  const auto profile = built();
  const nlohmann::json document = profile;
  EXPECT_EQ(document.at("groups").at("walwriter").at("self")[0].at("kernel"), true);
  EXPECT_EQ(document.get<CpuProfile>(), profile);
  model::Run run;
  run.cpu_profile = profile;
  const auto back = run_from_json(to_json(run));
  ASSERT_TRUE(back.cpu_profile.has_value());
  EXPECT_EQ(*back.cpu_profile, profile);
  EXPECT_FALSE(run_from_json(to_json(model::Run{})).cpu_profile.has_value());
}

TEST(CpuProfile, RecorderKeepsTheSamplesOfTheRun) {
  RunRecorder recorder(kStart, SystemClock::now(), base::Seconds(1));
  recorder.on_cpu_samples(batch());
  model::Run run;
  recorder.finish(kStart + std::chrono::seconds(3), run);
  ASSERT_TRUE(run.cpu_profile.has_value());
  EXPECT_EQ(run.cpu_profile->samples, 46u);
  EXPECT_EQ(run.cpu_profile->intervals.at(1).top.front().name, "base_yyparse");
  RunRecorder without(kStart, SystemClock::now(), base::Seconds(1));
  model::Run plain;
  without.finish(kStart + std::chrono::seconds(3), plain);
  EXPECT_FALSE(plain.cpu_profile.has_value());
}

}  // namespace
}  // namespace pgwaitprof::model
