// The run's summary (model/summary.h) on fixed runs: the top-N profile is the every-wait table
// cut, its errors from one pass over the intervals equal estimate_keys' row by row (the
// "other" row's too), the CPU row carries the kernel's figures, and the whole-run figures.
#include "model/summary.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <string>

#include "model/run_estimates.h"
#include "model/wait_events.h"

namespace pgwaitprof::model {
namespace {

// `intervals` 1 s intervals of 100 snapshots: CPU, eight LWLock waits of varying size, Lock
// waits of two backend types, idle sessions; a ramp of tps so that MSER-5 trims a warm-up.
Run fixed_run(int intervals) {
  Run run;
  run.interval = base::Seconds(1);
  std::mt19937 random(7);
  std::poisson_distribution<int> small(6);
  std::normal_distribution<double> noise(0, 20);
  for (int index = 0; index < intervals; ++index) {
    TimelineSlice slice;
    slice.start = base::Seconds(index);
    slice.duration = base::Seconds(1);
    slice.profile.add({"client backend", "active", "CPU", "CPU"}, 150 + small(random));
    for (int event = 0; event < 8; ++event) {
      slice.profile.add({"client backend", "active", "LWLock", "event" + std::to_string(event)},
                        static_cast<uint64_t>(small(random) * (event + 1)));
    }
    slice.profile.add({"client backend", "active", "Lock", "transactionid"}, small(random));
    slice.profile.add({"autovacuum worker", "active", "Lock", "transactionid"}, small(random));
    slice.profile.add({"client backend", "idle", "Client", "ClientRead"}, 300);
    slice.profile.add_snapshots(100);
    slice.kernel[kClientBackends] = {base::Seconds(1.6), base::Seconds(0.4), base::Seconds(1.0)};
    LoadgenProgress progress;
    progress.tps = (index < 6 ? 200 : 1000) + noise(random);
    slice.loadgen = progress;
    run.profile.merge(slice.profile);
    run.timeline.push_back(std::move(slice));
  }
  run.kernel[kClientBackends] = {base::Seconds(1.6 * intervals), base::Seconds(0.4 * intervals),
                                 base::Seconds(1.0 * intervals)};
  return run;
}

// A row's errors as estimate_keys (run_estimates.h) makes them, one row at a time.
WaitKeyEstimate one_row(const Run& run, const Summary& summary, const ProfileRow& row,
                        const std::set<std::string>& shown) {
  return estimate_keys(run, summary.window, false, [&](const WaitKey& key) {
    return row.other ? !shown.contains(display_name(key)) : display_name(key) == row.label;
  });
}

TEST(Summary, TheTopNProfileIsTheEveryWaitTableCutWithAnOtherRow) {
  const model::Run run = fixed_run(60);
  SummaryOptions options;
  options.top = 4;
  const Summary summary = summarize(run, options);
  EXPECT_GT(summary.window.first_interval, 0u);  // the ramp is trimmed
  ASSERT_EQ(summary.waits.rows.size(), 10u);     // CPU, 8 LWLock, Lock (merged types)
  ASSERT_EQ(summary.profile.rows.size(), 5u);
  const auto& other = summary.profile.rows.front();
  ASSERT_TRUE(other.other);
  EXPECT_EQ(other.other_rows, 6u);
  EXPECT_EQ(other.label, "other (6 wait events)");
  uint64_t dropped = 0;
  for (size_t index = 0; index < 6; ++index) dropped += summary.waits.rows[index].stat.count;
  EXPECT_EQ(other.stat.count, dropped);
  for (size_t index = 1; index < 5; ++index) {
    const auto& kept = summary.profile.rows[index];
    const auto& every = summary.waits.rows[index + 5];
    EXPECT_EQ(kept.label, every.label);
    EXPECT_EQ(kept.stat.count, every.stat.count);
    EXPECT_EQ(kept.stat.aas_stderr, every.stat.aas_stderr);
  }
  // Idle sessions stay out of the shares, in their own rows.
  EXPECT_EQ(summary.profile.idle.size(), 1u);
  EXPECT_EQ(summary.profile.total + summary.profile.idle_total,
            window_profile(run, summary.window).total(true));
}

TEST(Summary, OnePassErrorsEqualEstimateKeysRowByRow) {
  const model::Run run = fixed_run(80);
  SummaryOptions options;
  options.top = 3;
  const Summary summary = summarize(run, options);
  std::set<std::string> shown;
  for (const auto& row : summary.profile.rows) {
    if (!row.other) shown.insert(row.label);
  }
  for (const auto* table : {&summary.profile, &summary.waits}) {
    for (const auto& row : table->rows) {
      const auto expected =
          one_row(run, summary, row, table == &summary.waits ? std::set<std::string>{} : shown);
      ASSERT_TRUE(expected.aas.reliable) << row.label;
      EXPECT_TRUE(row.stat.errors_reliable) << row.label;
      EXPECT_DOUBLE_EQ(row.stat.aas_stderr, expected.aas.standard_error) << row.label;
      EXPECT_DOUBLE_EQ(row.stat.share_stderr, expected.share.standard_error) << row.label;
    }
  }
}

TEST(Summary, TheCpuRowCarriesTheKernelsFiguresOverTheWindow) {
  const model::Run run = fixed_run(60);
  const Summary summary = summarize(run);
  size_t with_split = 0;
  for (const auto& row : summary.profile.rows) {
    if (!row.cpu_split) continue;
    ++with_split;
    EXPECT_EQ(row.label, kCpu);
    EXPECT_NEAR(row.cpu_split->on_cpu_aas, 1.6, 1e-9);
    EXPECT_NEAR(row.cpu_split->runqueue_aas, 0.4, 1e-9);
    EXPECT_NEAR(row.cpu_split->on_cpu_share, row.stat.share / row.stat.aas * 1.6, 1e-9);
  }
  EXPECT_EQ(with_split, 1u);
  EXPECT_NEAR(summary.kernel.at(kClientBackends).on_cpu, 1.6, 1e-9);
}

TEST(Summary, WholeRunFiguresAndTheTimeline) {
  const model::Run run = fixed_run(30);
  const Summary summary = summarize(run);
  const auto snapshots = static_cast<double>(run.profile.snapshots());
  EXPECT_DOUBLE_EQ(summary.active_sessions,
                   static_cast<double>(run.profile.total(false)) / snapshots);
  EXPECT_EQ(summary.top_wait, "CPU");
  uint64_t lock = 0;
  for (const auto& [key, count] : run.profile.counts()) {
    if (key.wait_event_type == "Lock") lock += count;
  }
  EXPECT_DOUBLE_EQ(summary.lock_wait_aas, static_cast<double>(lock) / snapshots);
  ASSERT_EQ(summary.timeline.size(), run.timeline.size());
  EXPECT_EQ(summary.timeline.front().dominant_wait, "CPU");
  EXPECT_NEAR(*summary.timeline.front().oncpu_aas, 1.6, 1e-9);
  ASSERT_TRUE(summary.tps.steady);
  ASSERT_TRUE(summary.timeline_mean_tps);
  // The whole run's mean includes the warm-up the steady state leaves out.
  EXPECT_LT(*summary.timeline_mean_tps, summary.tps.steady->mean);
}

TEST(Summary, QueryIdsCoverTheWholeRunAndOtherGroupingsKeepTheirErrors) {
  model::Run run = fixed_run(60);
  run.query_ids = {{11, 500}, {12, 300}, {13, 20}};
  SummaryOptions by_query;
  by_query.by = GroupBy::kQueryId;
  by_query.top = 2;
  const Summary queries = summarize(run, by_query);
  EXPECT_EQ(queries.profile.window.first_interval, 0u);
  ASSERT_EQ(queries.profile.rows.size(), 3u);
  EXPECT_TRUE(queries.profile.rows.front().other);
  EXPECT_EQ(queries.profile.total, 820u);
  EXPECT_FALSE(queries.waits.rows.empty());  // the chart's table is there whatever the grouping

  SummaryOptions by_type;
  by_type.by = GroupBy::kBackendType;
  const Summary types = summarize(run, by_type);
  ASSERT_EQ(types.profile.rows.size(), 2u);
  for (const auto& row : types.profile.rows) EXPECT_TRUE(std::isfinite(row.stat.aas_stderr));
}

}  // namespace
}  // namespace pgwaitprof::model
