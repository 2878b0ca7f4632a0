// "Where the CPU went" in every format (--cpu-profile): the client backends' top functions with
// their share and AAS, kernel and user told apart, a stall whose CPU share rose with its own
// functions, the busiest background process, the CPU row's link, the CPU flame graph, and the
// names escaped wherever they are printed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "exporters/render/report_render.h"
#include "model/cpu_profile.h"
#include "model/summary.h"

namespace pgwaitprof::exporters {
namespace {

using std::chrono::seconds;

// 20 intervals of 1 s, 100 snapshots each, two client backends: 40 % CPU; in the stall (10-11 s)
// 90 % CPU. The CPU profile at 100 Hz: base_yyparse 60 samples a second, a kernel function 20,
// hash_search 20; in the stall a name that needs escaping runs instead. walwriter 10 a second.
model::Run cpu_run(const std::string& stall_function = "<b>ExecScan&</b>") {
  model::Run run;
  run.id = "cpu";
  run.interval = base::Seconds(1);
  run.duration = base::Seconds(20);
  model::CpuProfileBuilder builder;
  const auto start = model::SteadyClock::time_point{};
  for (int index = 0; index < 20; ++index) {
    const bool stalled = index == 10;
    model::TimelineSlice slice;
    slice.start = base::Seconds(index);
    slice.duration = base::Seconds(1);
    slice.profile.add({"client backend", "active", "CPU", "CPU"}, stalled ? 180 : 80);
    slice.profile.add({"client backend", "active", "LWLock", "WALWrite"}, stalled ? 20 : 120);
    slice.profile.add_snapshots(100);
    model::LoadgenProgress progress;
    progress.tps = stalled ? 10 : 1000;
    slice.loadgen = progress;
    run.profile.merge(slice.profile);
    run.timeline.push_back(std::move(slice));

    model::CpuSampleBatch batch;
    batch.hz = 100;
    batch.cpus = 2;
    const auto at = start + seconds(index);
    auto add = [&](const std::string& type, std::vector<std::string> frames, int count) {
      for (int sample = 0; sample < count; ++sample) batch.samples.push_back({type, at, frames});
    };
    if (stalled) {
      add("client backend", {"main", "PostgresMain", stall_function}, 100);
    } else {
      add("client backend", {"main", "PostgresMain", "exec_simple_query", "base_yyparse"}, 60);
      add("client backend", {"main", "PostgresMain", "finish_task_switch_[k]"}, 20);
      add("client backend", {"main", "PostgresMain", "hash_search_with_hash_value"}, 20);
    }
    add("walwriter", {"main", "WalWriterMain", "XLogBackgroundFlush"}, 10);
    builder.add(batch, [&](model::SteadyClock::time_point time) {
      return static_cast<size_t>((time - start) / seconds(1));
    });
  }
  run.cpu_profile = builder.profile(run.duration);
  model::Stall stall;
  stall.start = base::Seconds(10);
  stall.duration = base::Seconds(1);
  run.stalls.push_back(stall);
  return run;
}

TEST(CpuSection, TheSummaryHasTheTopFunctionsTheStallsAndTheBusiestBackgroundProcess) {
  const model::Summary summary = model::summarize(cpu_run());
  ASSERT_TRUE(summary.cpu);
  const auto& clients = summary.cpu->clients;
  EXPECT_EQ(clients.samples, 19u * 100 + 100);
  ASSERT_GE(clients.top.size(), 4u);
  EXPECT_EQ(clients.top[0].name, "base_yyparse");
  EXPECT_NEAR(clients.top[0].share, 19.0 * 60 / 2000, 1e-9);
  // 1140 samples at 100 Hz over 20 s: 0.57 sessions on a CPU.
  EXPECT_NEAR(clients.top[0].aas, 1140.0 / 100 / 20, 1e-9);
  const auto kernel = std::find_if(clients.top.begin(), clients.top.end(),
                                   [](const auto& function) { return function.kernel; });
  ASSERT_NE(kernel, clients.top.end());
  EXPECT_EQ(kernel->name, "finish_task_switch");
  EXPECT_NEAR(clients.kernel_share, 19.0 * 20 / 2000, 1e-9);
  ASSERT_TRUE(summary.cpu->background);
  EXPECT_EQ(summary.cpu->background->group, "walwriter");
  ASSERT_EQ(summary.cpu->stalls.size(), 1u);
  EXPECT_NEAR(summary.cpu->stalls[0].cpu_share, 0.9, 1e-9);
  ASSERT_FALSE(summary.cpu->stalls[0].top.empty());
  EXPECT_EQ(summary.cpu->stalls[0].top[0].name, "<b>ExecScan&</b>");
  EXPECT_FALSE(summary.cpu->stacks.empty());
}

TEST(CpuSection, EveryFormatStatesItUnderTheWaitTable) {
  const model::Run run = cpu_run();
  const std::string text = render_text(run);
  const auto waits = text.find("wait events:");
  const auto cpu = text.find("where the CPU went: client backends");
  ASSERT_NE(cpu, std::string::npos) << text;
  EXPECT_LT(waits, cpu);
  EXPECT_LT(cpu, text.find("load generator summary"));
  EXPECT_NE(text.find("57.0%  0.57  base_yyparse"), std::string::npos) << text;
  EXPECT_NE(text.find("finish_task_switch           kernel"), std::string::npos) << text;
  EXPECT_NE(text.find("where the CPU went: walwriter (busiest background process)"),
            std::string::npos);
  EXPECT_NE(text.find("In the stall at 10 s: CPU was 90% of the samples against 42% over the run"),
            std::string::npos)
      << text;

  const std::string markdown = render_markdown(run);
  EXPECT_NE(markdown.find("## Where the CPU went: client backends"), std::string::npos);
  EXPECT_NE(markdown.find("| 57.0% | 0.57 | base\\_yyparse | user |"), std::string::npos)
      << markdown;

  const std::string html = render_html(run);
  EXPECT_NE(html.find("<h2 id=\"cpu\">Where the CPU went: client backends</h2>"),
            std::string::npos);
  EXPECT_NE(html.find("<a href=\"#cpu\">CPU</a>"), std::string::npos);
  EXPECT_NE(html.find("id=\"flame-cpu-data\""), std::string::npos);
  EXPECT_NE(html.find("pgwaitprof.draw('flame', 'flame-cpu', 'flame-cpu-data')"),
            std::string::npos);
  // The wait graph's CPU frame leads to the CPU graph.
  EXPECT_NE(html.find("\"link\":\"flame-cpu\""), std::string::npos);

  const auto json = nlohmann::json::parse(render_json(run)).at("summary").at("cpu");
  EXPECT_EQ(json.at("clients").at("top").at(0).at("function"), "base_yyparse");
  EXPECT_EQ(json.at("background").at("group"), "walwriter");
  EXPECT_EQ(json.at("stalls").size(), 1u);
}

TEST(CpuSection, FunctionNamesAreEscapedInEveryFormat) {
  const model::Run run = cpu_run();
  const std::string html = render_html(run);
  EXPECT_EQ(html.find("<b>ExecScan"), std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;ExecScan&amp;&lt;/b&gt;"), std::string::npos);
  // Inside the flame graph's data: JSON, with < and > as \u escapes.
  EXPECT_NE(html.find("\\u003cb\\u003eExecScan\\u0026\\u003c/b\\u003e"), std::string::npos);
  const std::string markdown = render_markdown(run);
  EXPECT_EQ(markdown.find("<b>ExecScan"), std::string::npos) << markdown;
  const std::string text = render_text(cpu_run("ExecScan\x1b[31m"));
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
}

TEST(CpuSection, NoCpuProfileNoSection) {
  model::Run run = cpu_run();
  run.cpu_profile.reset();
  EXPECT_EQ(render_text(run).find("where the CPU went"), std::string::npos);
  EXPECT_EQ(render_html(run).find("flame-cpu"), std::string::npos);
  EXPECT_FALSE(nlohmann::json::parse(render_json(run)).at("summary").contains("cpu"));
}

}  // namespace
}  // namespace pgwaitprof::exporters
