// The host parsers on strings: /proc/stat, /proc/<pid>/stat, cpuinfo and meminfo.
#include "collectors/host.h"

#include <gtest/gtest.h>

namespace pgwaitprof::collectors {
namespace {

TEST(ParseProcStat, TheAggregateCpuLine) {
  const auto times = parse_proc_stat(
      "cpu  100 5 50 800 20 3 2 1 0 0\ncpu0 50 2 25 400 10 1 1 0 0 0\nintr 12345\n");
  ASSERT_TRUE(times);
  EXPECT_EQ(times->user, 100u);
  EXPECT_EQ(times->nice, 5u);
  EXPECT_EQ(times->system, 50u);
  EXPECT_EQ(times->idle, 800u);
  EXPECT_EQ(times->iowait, 20u);
  EXPECT_EQ(times->steal, 1u);
  EXPECT_EQ(times->total(), 981u);
  EXPECT_FALSE(parse_proc_stat("intr 1 2 3\n"));
  EXPECT_FALSE(parse_proc_stat(""));
}

TEST(ParseProcessCpuTicks, UtimePlusStimeAfterTheCommandName) {
  // Fields 14 and 15 (utime, stime), counted after the last ')'.
  const std::string stat =
      "4242 (pgbench (x) y) S 1 4242 4242 0 -1 4194304 500 0 0 0 730 270 0 0 20 0 3 0 100";
  EXPECT_EQ(parse_process_cpu_ticks(stat), 1000u);
  EXPECT_FALSE(parse_process_cpu_ticks("4242 (short) S 1 2"));
}

TEST(CpuBetween, PercentagesOfTheIntervalAndLoadGeneratorCores) {
  CpuTimes before{100, 0, 50, 800, 10, 0, 0, 0};
  CpuTimes after{160, 0, 70, 810, 20, 0, 0, 0};  // 100 ticks: 60 user, 20 sys, 10 idle, 10 iow
  const auto cpu = cpu_between(before, after, 50, base::Seconds(0.5), 100);
  EXPECT_DOUBLE_EQ(cpu.user_pct, 60);
  EXPECT_DOUBLE_EQ(cpu.system_pct, 20);
  EXPECT_DOUBLE_EQ(cpu.idle_pct, 10);
  EXPECT_DOUBLE_EQ(cpu.iowait_pct, 10);
  EXPECT_DOUBLE_EQ(cpu.loadgen_cores, 1.0);  // 50 ticks at 100/s in 0.5 s
}

TEST(DescribeHostParsers, CpuModelAndMemory) {
  EXPECT_EQ(parse_cpu_model("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC "
                            "7543P 32-Core Processor\nflags\t: fpu\n"),
            "AMD EPYC 7543P 32-Core Processor");
  EXPECT_EQ(parse_cpu_model("processor : 0\n"), "");
  EXPECT_EQ(parse_mem_total_bytes("MemTotal:       24576000 kB\nMemFree: 1 kB\n"),
            24576000ull * 1024);
  EXPECT_EQ(parse_mem_total_bytes("nothing"), 0u);
}

}  // namespace
}  // namespace pgwaitprof::collectors
