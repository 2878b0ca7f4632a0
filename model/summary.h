// A run's summary: every figure a run report states, computed once from a model::Run. The
// renderers (text, Markdown, HTML, CSV, report.json's summary) and the run history's index
// (store/run_summary) read it and only format it; nothing they print is computed twice per
// render. Its timeline rows point into the run it was made of: a summary does not outlive its
// run.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/kernel_check.h"
#include "model/profile.h"
#include "model/profile_tables.h"
#include "model/run.h"
#include "model/run_estimates.h"

namespace pgwaitprof::model {

// The wait classes of the timeline columns, in the order of the stacked chart (bottom first).
inline constexpr std::array<std::string_view, 7> kTimelineClasses = {"CPU", "LWLock", "Lock", "IO",
                                                                     "IPC", "Client", "other"};

struct TimelineRow {
  base::Seconds start{0};
  base::Seconds duration{0};
  uint64_t snapshots = 0;
  const LoadgenProgress* loadgen = nullptr;  // null when the load generator said nothing
  const HostCpu* cpu = nullptr;
  const LatencySummary* latency = nullptr;  // null without pgbench's transaction log
  // Client backends' average sessions on a CPU and waiting for one (schedstat); unset when the
  // server is not on this host.
  std::optional<double> oncpu_aas, runq_aas;
  std::array<double, kTimelineClasses.size()> aas{};        // per kTimelineClasses, non-idle
  std::vector<std::pair<std::string, double>> aas_by_type;  // every wait_event_type seen
  double aas_total = 0;
  std::string dominant_wait;    // display name of the most sampled non-idle wait, "" if none
  std::string background;       // "av ch"
  bool stalled = false;         // inside one of run.stalls
  bool sampler_outage = false;  // the sampler was disconnected during part of it
  // The server's transactions per second (pg_stat_database) beside the load generator's own;
  // unset when not read, or when the timeline's tps is the server's.
  std::optional<double> server_tps;
  // server_tps is a reading's mean spread over more than this interval (model::TimelineSlice).
  bool server_tps_spread = false;
};

// Average sessions of one group of processes (kClientBackends, ...) over the run, from the
// kernel's times.
struct KernelAas {
  double on_cpu = 0;
  double runqueue = 0;
};

// "Where the CPU went" (--cpu-profile): a group's on-CPU samples by the function running when
// each was taken (self time).
struct CpuFunctionShare {
  std::string name;
  bool kernel = false;
  uint64_t samples = 0;
  double share = 0;  // of the group's on-CPU samples
  double aas = 0;    // the sessions on a CPU it stands for
};

struct CpuGroupFigures {
  std::string group;  // "client backend", "walwriter", ...
  uint64_t samples = 0;
  double aas = 0;           // on a CPU, on average
  double kernel_share = 0;  // of its samples, in a kernel function
  std::vector<CpuFunctionShare> top;
};

// A stall in which the client backends' sampled CPU share rose above the run's: the functions
// they ran during it.
struct StallCpu {
  size_t stall = 0;      // index into run.stalls
  double cpu_share = 0;  // sampled CPU of the stall's non-idle samples
  double run_share = 0;  // the same over the run
  uint64_t samples = 0;  // the client backends' on-CPU samples in it
  std::vector<CpuFunctionShare> top;
};

inline constexpr size_t kCpuTopFunctions = 15;
inline constexpr size_t kStallTopFunctions = 5;
// A background process type is shown when it was on a CPU at least this much.
inline constexpr double kBusyBackgroundAas = 0.05;

struct CpuFigures {
  int hz = 0;
  int cpus = 0;
  uint64_t samples = 0;  // of every server process
  uint64_t lost = 0;     // the kernel dropped them (buffers full)
  CpuGroupFigures clients;
  std::optional<CpuGroupFigures> background;  // the busiest background type, when busy
  // The client backends' stacks as frames, root first, for the flame graph.
  std::map<std::vector<std::string>, uint64_t> stacks;
  std::vector<StallCpu> stalls;
};

struct Summary {
  SummaryOptions options;
  SteadyWindow window;  // the part of the run the profile and tps figures cover
  TpsFigures tps;
  // Mean of the intervals' tps over the whole run, for a run without a load generator summary.
  std::optional<double> timeline_mean_tps;
  ProfileTable profile;  // grouped and cut to top-N as the options say
  // Every wait event (grouped by "type | event", no "other" row), for charts and the history;
  // empty with full_keys.
  ProfileTable waits;
  std::optional<KernelCheck> kernel_check;
  std::vector<TimelineRow> timeline;
  std::map<std::string, KernelAas> kernel;  // per group of run.kernel
  double lock_wait_aas = 0;  // client backends' Lock waits over the run (lock waits section)
  // Over the whole run: non-idle sessions, per wait class, and the most sampled wait key.
  double active_sessions = 0;
  std::map<std::string, double> class_aas;
  std::string top_wait;
  // The whole run's samples as stacks for flame graphs: backend type, wait class and, but for
  // CPU, the wait event (states merged); idle sessions as the options say.
  std::map<std::vector<std::string>, uint64_t> wait_stacks;
  std::optional<CpuFigures> cpu;  // --cpu-profile only
};

Summary summarize(const Run& run, const SummaryOptions& options = {});

// The timeline's rows alone (the summary's `timeline`), for timeline.csv.
std::vector<TimelineRow> timeline_rows(const Run& run);

}  // namespace pgwaitprof::model
