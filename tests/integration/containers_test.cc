// Servers in containers and chroots on this host (issue 47, item 10), each on a cluster of its
// own (deploy/isolated-server.sh): Debian's PostgreSQL 15 in a PID namespace of its own
// (`unshare --pid --fork --mount-proc`, as containers start one: its pids are not this host's)
// and under a root of its own (a minimal chroot: its data directory is "/data"), and
// PostgreSQL 19 in the Debian sid root it needs (deploy/sid-root.sh). Each is sampled from
// memory with the kernel view and the CPU profile, as a server beside pgwaitprof is. And
// pgwaitprof in a PID namespace of its own, which cannot see the server's processes, says so.
#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/integration/harness.h"
#include "tests/integration/own_cluster.h"
#include "tests/integration/trace_witness.h"

namespace pgwaitprof::testing {
namespace {

class ContainersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    require_cluster();
    ASSERT_EQ(getuid(), 0u) << "servers in namespaces and chroots are started as root, like CI";
  }
};

// The sid root of deploy/sid-root.sh, "" when it has not been made.
std::string sid_root() {
  const std::string chosen = env("PGWAITPROF_SID_ROOT");
  const std::string cache =
      env("XDG_CACHE_HOME").empty() ? env("HOME") + "/.cache" : env("XDG_CACHE_HOME");
  const std::string root = chosen.empty() ? cache + "/pgwaitprof/roots/sid-pg19" : chosen;
  return std::filesystem::exists(root + "/.complete") ? root : "";
}

// A run of pgbench -S with the CPU profile against `cluster`: the memory source (named: auto
// would trace it, which the trace tests cover), the kernel view's check judged and within, the
// client backends' CPU profile, and figures that add up (2 clients: active sessions sampled and
// in the kernel's time, above 0 and below 2.5).
void expect_sampled_as_local(const OwnCluster& cluster, const std::string& name) {
  const auto data = temp_dir(name);
  auto run = pgwaitprof_run(data, {cluster.conninfo, "--cpu-profile", "--source", "memory"},
                            {"-S", "-c", "2", "-j", "2", "-T", "5"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto& sampler = run.report["sampler"];
  EXPECT_EQ(sampler["source"], "memory") << sampler.dump();
  const auto& check = run.report["summary"]["kernel_check"];
  ASSERT_TRUE(check.is_object()) << run.report["summary"].dump();
  EXPECT_TRUE(check["judged"].get<bool>()) << check.dump();
  EXPECT_TRUE(check["within"].get<bool>()) << check.dump() << run.report["warnings"].dump();
  ASSERT_TRUE(run.report.contains("cpu_profile")) << run.report["warnings"].dump();
  const auto& groups = run.report["cpu_profile"]["groups"];
  ASSERT_TRUE(groups.contains("client backend")) << groups.dump().substr(0, 2000);
  EXPECT_FALSE(groups["client backend"]["self"].empty());
  const auto text = read_text(run.dir / "report.txt");
  EXPECT_NE(text.find("kernel: on a CPU"), std::string::npos) << text;
  // Active client backends sampled, and the kernel's time of theirs read through this host's
  // pids: both there (0 where the pids did not map) and at most the 2 clients. On a loaded host
  // (CI's 2 cores, other work beside) the two clients are active 0.2 of the time, not 2.
  double samples = 0;
  for (const auto& entry : run.report["profile"]["entries"]) {
    if (entry["backend_type"] == "client backend" && entry["state"] == "active") {
      samples += entry["count"].get<double>();
    }
  }
  const double active = samples / run.report["profile"]["snapshots"].get<double>();
  EXPECT_GT(active, 0.02) << run.report["profile"].dump().substr(0, 3000);
  EXPECT_LT(active, 2.5) << run.report["profile"].dump().substr(0, 3000);
  const auto& kernel = run.report["kernel"]["client backends"];
  ASSERT_TRUE(kernel.is_object()) << run.report["kernel"].dump();
  const double busy = (kernel["on_cpu_s"].get<double>() + kernel["runqueue_s"].get<double>()) /
                      kernel["covered_s"].get<double>();
  EXPECT_GT(busy, 0.02) << kernel.dump();
  EXPECT_LT(busy, 2.5) << kernel.dump();
}

TEST_F(ContainersTest, AServerInItsOwnPidNamespaceIsSampledFromMemoryWithTheKernelView) {
  const auto dir = temp_dir("pid-namespace");
  OwnCluster cluster(dir, std::nullopt, "pid");
  // Its pids are its namespace's: the postmaster is the namespace's second process (after
  // runuser), as postmaster.pid says.
  const auto lock = read_text(std::filesystem::path(cluster.data) / "postmaster.pid");
  EXPECT_EQ(lock.substr(0, lock.find('\n')), "2") << lock;
  expect_sampled_as_local(cluster, "pid-namespace-run");
}

TEST_F(ContainersTest, AServerInAChrootIsSampledFromMemoryWithTheKernelView) {
  const auto dir = temp_dir("chroot");
  OwnCluster cluster(dir, std::nullopt, "chroot");
  const auto directory =
      engine::run_command({base::find_executable("psql"), "-X", "-At", "-c",
                           "SELECT current_setting('data_directory')", cluster.conninfo});
  EXPECT_EQ(directory.output, "/data\n");
  expect_sampled_as_local(cluster, "chroot-run");
}

// PostgreSQL 19 needs a newer C library than this host's: it runs in a sid root, sampled from
// memory and traced. deploy/test.sh makes the root beside its builds (deploy/sid-root.sh, once:
// minutes and Debian's mirror) and says why when it cannot, and the test then skips.
TEST_F(ContainersTest, PostgreSQL19InASidRootIsSampledFromMemoryAndTraced) {
  const auto root = sid_root();
  if (root.empty()) {
    GTEST_SKIP() << "no Debian sid root with PostgreSQL 19: make it with deploy/sid-root.sh "
                    "(about four minutes, from Debian's mirror), or name one in "
                    "PGWAITPROF_SID_ROOT";
  }
  const auto dir = temp_dir("sid-root");
  OwnCluster cluster(dir, std::nullopt, "root:" + root, "/usr/lib/postgresql/19/bin");
  const auto version = engine::run_command({base::find_executable("psql"), "-X", "-At", "-c",
                                            "SHOW server_version_num", cluster.conninfo});
  EXPECT_EQ(version.output.substr(0, 2), "19") << version.output;
  expect_sampled_as_local(cluster, "sid-root-run");
  // And traced (issue 48): the programs read the processes under their root as any server's.
  const auto traced = temp_dir("sid-root-trace");
  expect_traced_run(pgwaitprof_run(traced, {cluster.conninfo, "--source", "trace"},
                                   {"-c", "2", "-j", "2", "-T", "3"}),
                    "pg19");
}

// A server whose binary was deleted (or replaced by a package upgrade) after it started: its
// processes run a file that is gone. The memory source and the CPU profile read the running copy
// (/proc/<pid>/exe), the frames are named from it ("[postgres (deleted)+0x...]" before issue 47
// item 12), and one line in the report says what happened and how to end it.
TEST_F(ContainersTest, AServerWhoseBinaryWasDeletedIsSampledAndProfiledFromItsRunningCopy) {
  const auto dir = temp_dir("deleted-binary");
  // A copy of Debian's 15 with its share directory at the same relative place (the server finds
  // it from its own path).
  const auto tree = dir / "usr";
  std::filesystem::create_directories(tree / "lib" / "postgresql");
  std::filesystem::create_directories(tree / "share" / "postgresql");
  for (const auto& [from, to] :
       {std::pair{"/usr/lib/postgresql/15", tree / "lib" / "postgresql"},
        std::pair{"/usr/share/postgresql/15", tree / "share" / "postgresql"}}) {
    const auto copied = engine::run_command({"cp", "-a", from, to.string()});
    ASSERT_EQ(copied.exit_code, 0) << copied.output;
  }
  const auto bin = tree / "lib" / "postgresql" / "15" / "bin";
  OwnCluster cluster(dir, std::nullopt, "", bin.string());
  ASSERT_TRUE(std::filesystem::remove(bin / "postgres"));
  const auto data = temp_dir("deleted-binary-run");
  auto run = pgwaitprof_run(data, {cluster.conninfo, "--cpu-profile", "--source", "memory"},
                            {"-S", "-c", "2", "-j", "2", "-T", "3"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.report["sampler"]["source"], "memory") << run.report["sampler"].dump();
  ASSERT_TRUE(run.report.contains("cpu_profile")) << run.report["warnings"].dump();
  const auto profile = run.report["cpu_profile"].dump();
  EXPECT_EQ(profile.find("(deleted)"), std::string::npos) << profile.substr(0, 3000);
  const auto& self = run.report["cpu_profile"]["groups"]["client backend"]["self"];
  ASSERT_FALSE(self.empty()) << profile.substr(0, 3000);
  // The server's own functions are named, not addresses in a file that is gone.
  size_t named = 0;
  for (const auto& function : self) {
    const std::string name = function["function"];
    named += !function["kernel"].get<bool>() && !name.empty() && name.front() != '[';
  }
  EXPECT_GT(named, 0u) << self.dump().substr(0, 3000);
  const auto warnings = run.report["warnings"].dump();
  EXPECT_NE(warnings.find("was deleted or replaced after the server started: its functions are "
                          "named from the running copy"),
            std::string::npos)
      << warnings;
  EXPECT_NE(read_text(run.dir / "report.txt").find("restart the server to run the file on disk"),
            std::string::npos);
}

// pgwaitprof in a PID namespace of its own, the server outside it: the server's postmaster, at
// the other end of the Unix socket, has no pid in pgwaitprof's namespace. One line says so, where
// auto's reason is, and where the memory source asked for by name is refused.
TEST_F(ContainersTest, AServerInAPidNamespaceThisOneCannotSeeSaysSo) {
  const auto dir = temp_dir("unseen");
  const std::vector<std::string> unshare{"unshare", "--pid", "--fork", "--mount-proc", "--"};
  auto argv = unshare;
  argv.insert(argv.end(), {pgwaitprof_binary(), "run", test_conninfo(), "--data-dir",
                           (dir / "auto").string(), "--", "-c", "1", "-T", "2"});
  const auto automatic = engine::run_command(argv);
  ASSERT_EQ(automatic.exit_code, 0) << automatic.output;
  nlohmann::json report;
  for (const auto& run : std::filesystem::directory_iterator(dir / "auto" / "runs")) {
    report = nlohmann::json::parse(read_text(run.path() / "report.json"));
  }
  const std::string reason = report["sampler"]["source_reason"];
  EXPECT_EQ(report["sampler"]["source"], "activity");
  EXPECT_NE(reason.find("the server runs on this host in a PID namespace that this one cannot "
                        "see"),
            std::string::npos)
      << reason;
  EXPECT_EQ(reason.find('\n'), std::string::npos) << reason;

  argv = unshare;
  argv.insert(argv.end(), {pgwaitprof_binary(), "run", test_conninfo(), "--source", "memory",
                           "--data-dir", (dir / "memory").string(), "--", "-c", "1", "-T", "2"});
  const auto memory = engine::run_command(argv);
  EXPECT_NE(memory.exit_code, 0) << memory.output;
  EXPECT_NE(memory.output.find("memory source refused: the server runs on this host in a PID "
                               "namespace that this one cannot see"),
            std::string::npos)
      << memory.output;
}

}  // namespace
}  // namespace pgwaitprof::testing
