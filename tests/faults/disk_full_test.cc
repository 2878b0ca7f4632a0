// A full disk (issue 8 item 2): the data directory on a small tmpfs that is then filled. The
// daemon keeps sampling, the run is marked failed with the reason, no temporary file is left,
// earlier runs stay intact; in the foreground the text report still reaches the terminal.
#include <fcntl.h>
#include <sys/mount.h>

#include <sstream>

#include "tests/faults/fault_harness.h"

namespace pgwaitprof::testing {
namespace {

class DiskFull : public ::testing::Test {
 protected:
  void SetUp() override {
    require_cluster();
    mount_ = temp_dir("disk-full") / "mnt";
    std::filesystem::create_directories(mount_);
    if (::mount("tmpfs", mount_.c_str(), "tmpfs", 0, "size=4m") != 0) {
      GTEST_SKIP() << "could not mount a tmpfs (needs root): " << std::strerror(errno);
    }
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) ::umount2(mount_.c_str(), MNT_DETACH);
  }
  // Writes a file until the file system is full.
  void fill() const {
    const int fd = ::open((mount_ / "filler").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    const std::string block(4096, 'x');
    while (::write(fd, block.data(), block.size()) > 0) {
    }
    ::close(fd);
  }
  static void expect_no_temporary_files(const std::filesystem::path& dir) {
    for (const auto& file : files_under(dir)) {
      EXPECT_EQ(file.filename().string().find(".tmp"), std::string::npos) << file;
    }
  }
  std::filesystem::path mount_;
  bool mounted_ = false;
};

TEST_F(DiskFull, ForegroundRunPrintsItsReportAndLeavesNoTemporaryFiles) {
  const auto data = mount_ / "data";
  std::filesystem::create_directories(data / "runs");
  fill();
  auto run =
      engine::run_command({pgwaitprof_binary(), "run", test_conninfo(), "--no-daemon", "--data-dir",
                           data.string(), "--", "-c", "1", "-R", kModestRate, "-T", "2"});
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.output.find("could not write"), std::string::npos) << run.output;
  // The text report, on the terminal.
  EXPECT_NE(run.output.find("FAILED"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("snapshots"), std::string::npos) << run.output;
  expect_no_temporary_files(data);
}

TEST_F(DiskFull, DaemonRunFailsWithTheReasonAndTheDaemonKeepsSampling) {
  const auto data = mount_ / "data";
  FaultDaemon daemon("disk-full-daemon", "", test_conninfo(), 100, data);
  ASSERT_TRUE(daemon.up()) << daemon.process->log();
  const std::string request =
      nlohmann::json{{"type", "run"},
                     {"target", "local"},
                     {"pgbench_args", {"-c", "1", "-R", kModestRate, "-T", "2"}}}
          .dump() +
      "\n";
  auto run_once = [&] {
    const int fd = connect_unix(daemon.socket());
    send_all(fd, request);
    const std::string events = read_to_eof(fd, 60s);
    ::close(fd);
    std::istringstream lines(events);
    for (std::string line; std::getline(lines, line);) {
      auto event = nlohmann::json::parse(line, nullptr, false);
      if (event.is_object() && event.value("event", "") == "done") return event;
    }
    return nlohmann::json();
  };
  const auto first = run_once();
  ASSERT_TRUE(first.is_object()) << daemon.process->log();
  ASSERT_EQ(first["status"], "completed") << first.dump() << daemon.process->log();
  const std::filesystem::path first_dir = first["dir"].get<std::string>();
  const std::string first_report = read_text(first_dir / "report.json");

  fill();
  const auto second = run_once();
  ASSERT_TRUE(second.is_object()) << daemon.process->log();
  EXPECT_EQ(second["status"], "failed") << second.dump();
  EXPECT_NE(second["error"].get<std::string>().find("No space left on device"), std::string::npos)
      << second.dump();
  ASSERT_TRUE(daemon.process->running()) << daemon.process->log();
  EXPECT_NE(daemon.process->log().find("could not write run directory"), std::string::npos);
  const double before = daemon.snapshots();
  EXPECT_TRUE(eventually(5s, [&] { return daemon.snapshots() > before + 50; }));
  EXPECT_EQ(read_text(first_dir / "report.json"), first_report);
  expect_no_temporary_files(data);
}

// Item 10 of issue 23: the disk fills while a daemon run writes its report (report.html does not
// fit). report.json, written last, says failed with the reason; no rendering that says
// completed stays; the client that asked for the run prints the reason and no path to a
// report.html that does not exist.
TEST_F(DiskFull, DiskFullWhileTheReportIsWrittenLeavesAFailedRunAndTheClientSaysWhy) {
  const auto data = mount_ / "data";
  ::setenv("PGWAITPROF_FAULT_HOLD", "report", 1);
  ::setenv("PGWAITPROF_FAULT_HOLD_SECONDS", "3", 1);
  FaultDaemon daemon("disk-full-report", "", test_conninfo(), 100, data);
  ::unsetenv("PGWAITPROF_FAULT_HOLD");
  ::unsetenv("PGWAITPROF_FAULT_HOLD_SECONDS");
  ASSERT_TRUE(daemon.up()) << daemon.process->log();
  ChildProcess client({"/usr/bin/env", "PGWAITPROF_SOCKET=" + daemon.socket().string(),
                       pgwaitprof_binary(), "run", test_conninfo(), "--data-dir",
                       (mount_ / "client").string(), "--", "-c", "1", "-R", kModestRate, "-T", "2"},
                      daemon.dir / "client.log");
  ASSERT_TRUE(eventually(60s, [&] {
    return daemon.process->log().find("holding at report") != std::string::npos;
  })) << daemon.process->log();
  // Room for the small files and report.json, not for report.html (about 100 kB).
  fill();
  ::truncate((mount_ / "filler").c_str(),
             static_cast<off_t>(std::filesystem::file_size(mount_ / "filler")) - 60 * 1024);
  const auto code = client.wait(60s);
  ASSERT_TRUE(code.has_value()) << client.log();
  EXPECT_EQ(*code, 1) << client.log();
  EXPECT_NE(client.log().find("No space left on device"), std::string::npos) << client.log();
  // No "report: .../report.html" line for a page that was not written.
  EXPECT_EQ(client.log().find("\nreport: "), std::string::npos) << client.log();
  std::filesystem::path run_dir;
  for (const auto& entry : std::filesystem::directory_iterator(data / "runs")) {
    run_dir = entry.path();
  }
  const auto report = nlohmann::json::parse(read_text(run_dir / "report.json"));
  EXPECT_EQ(report["status"], "failed");
  EXPECT_NE(report["error"].get<std::string>().find("could not write the report"),
            std::string::npos)
      << report["error"];
  for (const char* rendering : {"report.txt", "report.md", "report.html"}) {
    EXPECT_FALSE(std::filesystem::exists(run_dir / rendering)) << rendering;
  }
  expect_no_temporary_files(data);
}

}  // namespace
}  // namespace pgwaitprof::testing
