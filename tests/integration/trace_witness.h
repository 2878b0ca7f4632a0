// The traced source's witnesses (issue 48, item 4) against a real server: the source attached in
// the test's own process, what it charged to client backends, and the kernel's own accounting of
// the same processes (/proc/<pid>/schedstat); and the checks of a traced run's report. For the
// traced source's tests on Debian's 15 (TraceSourceTest), the version matrix (every major 13-18,
// tests/versions) and PostgreSQL 19 in its sid root (ContainersTest).
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <asio.hpp>
#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectors/pg_session.h"
#include "collectors/trace/trace_source.h"
#include "model/profile.h"
#include "tests/integration/harness.h"

namespace pgwaitprof::testing {

// The traced source prepared on the server of `conninfo` (its session closed again: the
// programs need none).
inline std::unique_ptr<collectors::trace::TraceSource> attached_trace_source(
    const std::string& conninfo) {
  using namespace std::chrono_literals;
  auto source = std::make_unique<collectors::trace::TraceSource>();
  run_coroutine([&]() -> asio::awaitable<void> {
    collectors::PgSession session(co_await asio::this_coro::executor);
    EXPECT_FALSE(co_await session.connect(conninfo, 5s));
    auto refused = co_await source->prepare(session);
    EXPECT_FALSE(refused) << refused->message;
  });
  return source;
}

// The profile's traced parts of one wait event of client backends, summed over states.
inline model::TracedTime traced_client(const model::Profile& profile, std::string_view type,
                                       std::string_view event) {
  model::TracedTime sum;
  for (const auto& [key, traced] : profile.traced()) {
    if (key.backend_type == "client backend" && key.wait_event_type == type &&
        key.wait_event == event) {
      sum.merge(traced);
    }
  }
  return sum;
}

// Every traced key of the profile with its parts, for a failure's message.
inline std::string describe_traced(const model::Profile& profile) {
  std::string text;
  for (const auto& [key, traced] : profile.traced()) {
    text += fmt::format("{} {} {} {}: waits={} blocked={:.4f} runq={:.4f} cpu={:.4f}\n",
                        key.backend_type, key.state, key.wait_event_type, key.wait_event,
                        traced.waits, traced.blocked_s, traced.runqueue_s, traced.on_cpu_s);
  }
  return text;
}

// /proc/<pid>/schedstat: on a CPU and waiting for one, in seconds.
inline std::pair<double, double> schedstat(pid_t pid) {
  std::istringstream in(read_text(fmt::format("/proc/{}/schedstat", pid)));
  double on_cpu = 0, waiting = 0;
  in >> on_cpu >> waiting;
  return {on_cpu * 1e-9, waiting * 1e-9};
}

// The client backends of the postmaster (over the socket, "[local]" in their title).
inline std::vector<pid_t> client_backends(pid_t postmaster) {
  std::vector<pid_t> found;
  for (const pid_t pid : collectors::trace::process_tree(postmaster)) {
    if (read_text(fmt::format("/proc/{}/cmdline", pid)).find("[local]") != std::string::npos) {
      found.push_back(pid);
    }
  }
  return found;
}

// The kernel's times of `pids` summed: on a CPU and waiting for one, in seconds.
struct KernelTimes {
  double on_cpu = 0, waiting = 0;
  double sum() const { return on_cpu + waiting; }
};
inline KernelTimes kernel_times(const std::vector<pid_t>& pids) {
  KernelTimes times;
  for (const pid_t pid : pids) {
    const auto [on_cpu, waiting] = schedstat(pid);
    times.on_cpu += on_cpu;
    times.waiting += waiting;
  }
  return times;
}

// One window of the schedstat witness: the client backends' traced on-CPU and run-queue time
// against the kernel's times of the processes `pids` over the same window. Each read of the
// source is bracketed by two readings of the kernel's times: on a loaded machine the test's
// own process waits for a CPU between them (the three backends of the version matrix's window
// gain 0.1 s of run-queue time in such a gap), so the kernel's time over the traced window lies
// between the narrowest and the widest of the readings.
struct CpuWitness {
  model::Profile profile;  // the traced source's, of the window
  // The client backends' times in the profile, as the kernel counts them: the profile has the
  // waits for a CPU in progress at each read (the kernel's run_delay has them when they end) and
  // not the time on a CPU in progress (the kernel's sum_exec_runtime has it up to its last tick).
  double traced_cpu = 0, traced_queue = 0;
  KernelTimes start_before, start_after, end_before, end_after;
  double kernel_least() const { return end_before.sum() - start_after.sum(); }
  double kernel_most() const { return end_after.sum() - start_before.sum(); }
};

// Reads the source (the baseline), calls `during`, and reads it again. `pids` must be every
// client backend alive in the window.
template <typename During>
CpuWitness cpu_witness(collectors::trace::TraceSource& source, const std::vector<pid_t>& pids,
                       During during) {
  CpuWitness witness;
  witness.start_before = kernel_times(pids);
  EXPECT_TRUE(source.read(model::SteadyClock::now()));
  witness.start_after = kernel_times(pids);
  const auto start = source.clients_in_progress();
  during();
  witness.end_before = kernel_times(pids);
  auto profile = source.read(model::SteadyClock::now());
  witness.end_after = kernel_times(pids);
  EXPECT_TRUE(profile) << profile.error().message;
  if (!profile) return witness;
  witness.profile = std::move(*profile);
  for (const auto& [key, traced] : witness.profile.traced()) {
    if (key.backend_type != "client backend") continue;
    witness.traced_cpu += traced.on_cpu_s;
    witness.traced_queue += traced.runqueue_s;
  }
  const auto end = source.clients_in_progress();
  witness.traced_cpu += end.on_cpu_s - start.on_cpu_s;
  witness.traced_queue -= end.runqueue_s - start.runqueue_s;
  return witness;
}

// The witness: on-CPU + run-queue time within 2 % of the kernel's over the window (between its
// least and most, each widened by 2 %). The split alone is printed, not bounded: 2.4 % apart in
// one of four runs on a loaded machine, and 10 % (3.65 s traced on a CPU against schedstat's
// 3.32 s, the sum within 2 %) in the merged tree's full test run beside two other lanes. Where
// the traced source puts the boundary between a wake-up's run-queue time and the time on a CPU
// is an open question of issue 48; the witness is the sum.
inline void expect_schedstat_witness(const CpuWitness& witness, const std::string& label) {
  const double traced = witness.traced_cpu + witness.traced_queue;
  // Enough time for 2 % to mean something (1.7 s in the version matrix's lane, 0.3 s of it on
  // a CPU: six majors side by side on 2 cores).
  EXPECT_GT(witness.kernel_least(), 0.5) << label;
  EXPECT_GE(traced, witness.kernel_least() * 0.98) << label << "\n"
                                                   << describe_traced(witness.profile);
  EXPECT_LE(traced, witness.kernel_most() * 1.02) << label << "\n"
                                                  << describe_traced(witness.profile);
  const double kernel_cpu = (witness.end_before.on_cpu + witness.end_after.on_cpu -
                             witness.start_before.on_cpu - witness.start_after.on_cpu) /
                            2;
  const double kernel_queue = (witness.end_before.waiting + witness.end_after.waiting -
                               witness.start_before.waiting - witness.start_after.waiting) /
                              2;
  std::cout << fmt::format(
      "{} on a CPU: traced {:.4f} s, schedstat {:.4f} s; waiting for one: traced {:.4f} s, "
      "schedstat {:.4f} s; the sum traced {:.4f} s, schedstat {:.4f} to {:.4f} s\n",
      label, witness.traced_cpu, kernel_cpu, witness.traced_queue, kernel_queue, traced,
      witness.kernel_least(), witness.kernel_most());
}

// Ten `SELECT pg_sleep(0.2)` in the profile: ten Timeout | PgSleep waits of client backends,
// their median and mean within 5 % of 200 ms.
inline void expect_ten_sleeps_of_200ms(const model::Profile& profile, const std::string& label) {
  const auto sleep = traced_client(profile, "Timeout", "PgSleep");
  EXPECT_EQ(sleep.waits, 10u) << label << "\n" << describe_traced(profile);
  EXPECT_NEAR(sleep.percentile_s(0.5), 0.2, 0.2 * 0.05) << label << "\n"
                                                        << describe_traced(profile);
  EXPECT_NEAR(sleep.mean_s(), 0.2, 0.2 * 0.05) << label;
}

// A run of `pgwaitprof run --source trace` of pgbench: completed by the traced source as asked,
// with exact time per wait event in report.json: the client backends' ClientRead with its
// blocking waits, their durations (the histogram, the longest) and time, and on-CPU time; the
// summary's rows carry the traced parts.
inline void expect_traced_run(const RunResult& run, const std::string& label) {
  ASSERT_EQ(run.exit_code, 0) << label << ": " << run.output;
  ASSERT_TRUE(run.report.is_object()) << label << ": " << run.output;
  EXPECT_EQ(run.report["status"], "completed") << label;
  const auto& sampler = run.report["sampler"];
  EXPECT_EQ(sampler["requested_source"], "trace") << sampler.dump();
  EXPECT_EQ(sampler["source"], "trace") << label << ": " << sampler.dump() << run.output;
  const auto& traced = run.report["profile"].value("traced", nlohmann::json::array());
  ASSERT_FALSE(traced.empty()) << label << ": " << run.report["profile"].dump().substr(0, 3000);
  bool client_read = false;
  double on_cpu = 0;
  for (const auto& entry : traced) {
    if (entry["backend_type"] != "client backend") continue;
    on_cpu += entry["on_cpu_s"].get<double>();
    if (entry["wait_event"] != "ClientRead" || entry["waits"].get<uint64_t>() == 0) continue;
    client_read = true;
    EXPECT_GT(entry["blocked_s"].get<double>(), 0) << entry.dump();
    EXPECT_FALSE(entry["histogram"].empty()) << entry.dump();
    EXPECT_GT(entry["max_s"].get<double>(), 0) << entry.dump();
  }
  EXPECT_TRUE(client_read) << label << ": " << traced.dump().substr(0, 3000);
  EXPECT_GT(on_cpu, 0) << label << ": " << traced.dump().substr(0, 3000);
  // The hackers' table: pgbench's TPC-B waits for its next statement inside a transaction
  // (idle in transaction: not idle), a row with exact waits, time and durations.
  bool row = false;
  for (const auto& wait : run.report["summary"]["waits"]) {
    if (wait["wait"] != "Client | ClientRead" || !wait.contains("traced")) continue;
    const auto& exact = wait["traced"];
    row = exact["exact"].get<bool>() && exact["waits"].get<uint64_t>() > 0 &&
          exact["time_s"].get<double>() > 0 && exact["p50_s"].get<double>() > 0 &&
          exact["max_s"].get<double>() >= exact["p50_s"].get<double>();
    EXPECT_TRUE(row) << wait.dump();
  }
  EXPECT_TRUE(row) << label << ": " << run.report["summary"]["waits"].dump();
  EXPECT_EQ(run.output.find("collection failed"), std::string::npos) << run.output;
}

}  // namespace pgwaitprof::testing
