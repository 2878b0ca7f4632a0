// The verifier's own words picked out of libbpf's messages of a failed load: the program it
// rejected and the last lines of its log, not libbpf's lines after it.
#include <gtest/gtest.h>

#include "collectors/trace/trace_programs.h"

namespace pgwaitprof::collectors::trace {
namespace {

// libbpf 1.1's messages of a load the verifier refused (on_switch attached to sched_wakeup, as
// the fault point trace-verifier does), as its print callback receives them.
constexpr std::string_view kRejected =
    "libbpf: prog 'on_switch': BPF program load failed: Permission denied\n"
    "libbpf: prog 'on_switch': -- BEGIN PROG LOAD LOG --\n"
    "0: R1=ctx(off=0,imm=0) R10=fp0\n"
    "; int BPF_PROG(on_switch, bool preempt, struct task_struct* prev,\n"
    "0: (79) r7 = *(u64 *)(r1 +8)\n"
    "func 'sched_wakeup' doesn't have 2-th argument\n"
    "invalid bpf_context access off=8 size=8\n"
    "processed 1 insns (limit 1000000) max_states_per_insn 0 total_states 0 peak_states 0\n"
    "-- END PROG LOAD LOG --\n"
    "libbpf: prog 'on_switch': failed to load: -13\n"
    "libbpf: failed to load object 'waits'\n"
    "libbpf: failed to load BPF skeleton 'waits': -13\n";

TEST(VerifierRejection, TheProgramAndTheLastLinesOfTheVerifiersLog) {
  const auto rejected = verifier_rejection(kRejected);
  ASSERT_TRUE(rejected);
  EXPECT_EQ(rejected->program, "on_switch");
  EXPECT_EQ(rejected->tail,
            "func 'sched_wakeup' doesn't have 2-th argument / invalid bpf_context access off=8 "
            "size=8 / processed 1 insns (limit 1000000) max_states_per_insn 0 total_states 0 "
            "peak_states 0");
  EXPECT_EQ(verifier_rejection(kRejected, 1)->tail.substr(0, 15), "processed 1 ins");
}

TEST(VerifierRejection, NothingWhereTheVerifierDidNotRun) {
  EXPECT_FALSE(verifier_rejection(""));
  EXPECT_FALSE(verifier_rejection(
      "libbpf: Error in bpf_object__probe_loading():Operation not permitted(1).\n"
      "libbpf: failed to load object 'waits'\n"));
  // A log with nothing in it says nothing.
  EXPECT_FALSE(
      verifier_rejection("libbpf: prog 'x': -- BEGIN PROG LOAD LOG --\n\n"
                         "-- END PROG LOAD LOG --\n"));
}

TEST(VerifierRejection, TheLastOfSeveralLogs) {
  std::string two =
      "libbpf: prog 'on_exit': -- BEGIN PROG LOAD LOG --\nfirst\n"
      "-- END PROG LOAD LOG --\n";
  two += kRejected;
  const auto rejected = verifier_rejection(two, 1);
  ASSERT_TRUE(rejected);
  EXPECT_EQ(rejected->program, "on_switch");
}

}  // namespace
}  // namespace pgwaitprof::collectors::trace
