// The traced source refused (issue 48 item 7): a kernel without BTF (the fault point
// PGWAITPROF_FAULT_FAIL=trace-btf), no right to load BPF programs (pgwaitprof as the server's
// user; as root without CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN), and a verifier rejection (the
// fault point trace-verifier attaches the switch program where the real verifier refuses it).
// Each is one line naming the cause, with the verifier's own last lines where it ran; the source
// was named, so it is not replaced: the run fails with that line and its report says so; and
// nothing of the run stays loaded.
#include <fmt/format.h>

#include "tests/faults/trace_harness.h"

namespace pgwaitprof::testing {
namespace {

class TraceRefusals : public ::testing::Test {
 protected:
  void SetUp() override {
    require_cluster();
    if (::geteuid() != 0) GTEST_SKIP() << "the traced source's fault tests run as root, like CI";
  }
};

struct Refused {
  int exit_code = -1;
  std::string output;
  std::string failure;  // the run's last line: "pgwaitprof: run failed: ..."
  nlohmann::json report;
  std::vector<std::string> left;  // programs of the run still loaded after it
};

// `pgwaitprof run --source trace` on the test cluster, behind `prefix` (env, capsh) and as
// `account` when given; a short pgbench that never runs when the source is refused.
Refused refused_run(const std::string& name, const std::vector<std::string>& prefix,
                    const std::optional<engine::RunAs>& account = std::nullopt) {
  const auto dir = temp_dir("trace-refused-" + name);
  const auto data = dir / "data";
  if (account) {
    std::filesystem::create_directories(data);
    (void)::chown(data.c_str(), account->uid, account->gid);
  }
  std::vector<std::string> argv = prefix;
  argv.insert(argv.end(),
              {pgwaitprof_binary(), "run", test_conninfo(), "--source", "trace", "--no-daemon",
               "--data-dir", data.string(), "--", "-n", "-S", "-T", "3"});
  const uint32_t before = highest_program_id();
  auto result = engine::run_command(argv, {account, {}});
  Refused refused{result.exit_code, result.output, "", report_of(data), {}};
  const std::string marker = "pgwaitprof: run failed: ";
  if (const auto at = result.output.rfind(marker); at != std::string::npos) {
    refused.failure = result.output.substr(at, result.output.find('\n', at) - at);
  }
  // Its pid is gone: any program of ours loaded since, held by no live process, is left over.
  refused.left = programs_left_after(before, -1);
  std::filesystem::remove_all(dir);
  return refused;
}

// What every refusal shows: a failed run whose one line says why, and nothing loaded.
void expect_refused(const Refused& refused, const std::string& cause) {
  EXPECT_NE(refused.exit_code, 0) << refused.output;
  EXPECT_NE(refused.failure.find(cause), std::string::npos)
      << "expected \"" << cause << "\" in the failure line:\n"
      << refused.output;
  EXPECT_NE(refused.failure.find("trace source refused: "), std::string::npos) << refused.failure;
  ASSERT_TRUE(refused.report.is_object()) << refused.output;
  EXPECT_EQ(refused.report["status"], "failed");
  // A named source is never replaced.
  EXPECT_EQ(refused.report["sampler"]["source"], "trace") << refused.report["sampler"];
  EXPECT_EQ("pgwaitprof: run failed: " + refused.report["error"].get<std::string>(),
            refused.failure);
  EXPECT_TRUE(refused.left.empty()) << refused.left.front();
}

TEST_F(TraceRefusals, NoBtfIsOneLineNamingIt) {
  const auto refused = refused_run("btf", {"/usr/bin/env", "PGWAITPROF_FAULT_FAIL=trace-btf"});
  expect_refused(refused,
                 "trace source refused: the kernel has no BTF (/sys/kernel/btf/vmlinux is "
                 "missing: CONFIG_DEBUG_INFO_BTF)");
}

constexpr const char* kNoRight =
    "trace source refused: the kernel does not let this process load BPF programs (Operation "
    "not permitted): run as root or with CAP_BPF and CAP_PERFMON, and check "
    "kernel.unprivileged_bpf_disabled and lockdown";

TEST_F(TraceRefusals, AnotherUserMayNotLoadBpfAndTheLineSaysSo) {
  // The server's own user: it may read the server's memory, so only the kernel refuses it.
  // (kernel.unprivileged_bpf_disabled is what refuses it here; lockdown cannot be set on a
  // running test machine.)
  const auto account = engine::unprivileged_account();
  ASSERT_TRUE(account);
  expect_refused(refused_run("user", {}, account), kNoRight);
}

TEST_F(TraceRefusals, RootWithoutTheBpfCapabilitiesIsRefusedAndTheLineSaysSo) {
  const auto capsh = base::find_executable("capsh");
  if (capsh.empty()) GTEST_SKIP() << "capsh (Debian's libcap2-bin) is not installed";
  // Out of the bounding set, so the program exec'd as root has none of them.
  const auto refused = refused_run("caps", {capsh, "--drop=cap_bpf,cap_perfmon,cap_sys_admin", "--",
                                            "-c", "exec \"$0\" \"$@\""});
  expect_refused(refused, kNoRight);
}

TEST_F(TraceRefusals, AVerifierRejectionCarriesTheVerifiersLastLines) {
  const auto refused =
      refused_run("verifier", {"/usr/bin/env", "PGWAITPROF_FAULT_FAIL=trace-verifier"});
  // The verifier's own words: the context access it refused, and how far it got.
  expect_refused(refused,
                 "trace source refused: the kernel's verifier rejected the BPF program "
                 "\"on_switch\" (Permission denied): ");
  EXPECT_NE(refused.failure.find("invalid bpf_context access"), std::string::npos)
      << refused.failure;
  EXPECT_NE(refused.failure.find("processed "), std::string::npos) << refused.failure;
  // Not taken for a want of privilege, nor libbpf's own closing lines.
  EXPECT_EQ(refused.failure.find("does not let this process"), std::string::npos)
      << refused.failure;
  EXPECT_EQ(refused.failure.find("failed to load"), std::string::npos) << refused.failure;
}

}  // namespace
}  // namespace pgwaitprof::testing
