// The SSH command of a remote sampler (no password on it, BatchMode) and the clock offset from
// the fastest ping.
#include "daemon/engine/remote_sampler.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace pgwaitprof::engine {
namespace {

TEST(RemoteSampler, SshCommandHasBatchModeAndNoConnectionString) {
  RemoteSamplerOptions options;
  options.host = *config::parse_sampler_host("ssh://bench@db1:2222");
  options.ssh_command = {"ssh", "-F", "/tmp/config"};
  const auto argv = ssh_argv(options);
  const std::vector<std::string> expected = {"ssh",
                                             "-F",
                                             "/tmp/config",
                                             "-o",
                                             "BatchMode=yes",
                                             "-o",
                                             "ConnectTimeout=10",
                                             "-o",
                                             "ServerAliveInterval=5",
                                             "-o",
                                             "ServerAliveCountMax=3",
                                             "-T",
                                             "-p",
                                             "2222",
                                             "bench@db1",
                                             "pgwaitprof __sample-remote"};
  EXPECT_EQ(argv, expected);
  // The connection string (and its password) goes on the channel: nothing of it here.
  collectors::SamplerOptions sampled;
  sampled.conninfo = "host=db1 password=secret";
  for (const auto& arg : argv) EXPECT_EQ(arg.find("secret"), std::string::npos);
}

TEST(RemoteSampler, ClockOffsetFromTheFastestPing) {
  // Remote clock 2 s ahead; the second ping is the fastest (round trip 100 us).
  const std::vector<ClockPing> pings = {
      {1'000'000, 3'000'900, 1'002'000},  // slow and asymmetric
      {2'000'000, 4'000'050, 2'000'100},
      {3'000'000, 5'000'400, 3'000'500},
  };
  const auto estimate = estimate_clock(pings);
  EXPECT_EQ(estimate.round_trip.count(), 100);
  EXPECT_EQ(estimate.offset.count(), 2'000'000);
}

TEST(RemoteSampler, EnvironmentNamesTheSshCommand) {
  ::setenv("PGWAITPROF_SSH_COMMAND", "ssh  -F /tmp/x", 1);
  EXPECT_EQ(ssh_command_from_environment(), (std::vector<std::string>{"ssh", "-F", "/tmp/x"}));
  ::unsetenv("PGWAITPROF_SSH_COMMAND");
  EXPECT_EQ(ssh_command_from_environment(), std::vector<std::string>{"ssh"});
}

// What crosses the channel as PGPASSWORD: the password libpq here would use, from the string,
// PGPASSWORD or the password file (PGPASSFILE stands for ~/.pgpass). No server is needed:
// libpq reads the file before it connects (port 1 refuses).
TEST(RemoteSampler, PasswordLibpqWouldUseComesFromThePasswordFile) {
  const auto file =
      std::filesystem::temp_directory_path() / ("pgwaitprof-pgpass-" + std::to_string(::getpid()));
  std::ofstream(file) << "127.0.0.1:1:bench:bench:from-the-file\n";
  ::chmod(file.c_str(), 0600);  // libpq ignores a file others may read
  const char* saved = std::getenv("PGPASSWORD");
  const std::string saved_password = saved != nullptr ? saved : "";
  ::unsetenv("PGPASSWORD");
  ::setenv("PGPASSFILE", file.c_str(), 1);
  EXPECT_EQ(libpq_password("host=127.0.0.1 port=1 user=bench dbname=bench"), "from-the-file");
  EXPECT_EQ(libpq_password("postgresql://bench@127.0.0.1:1/bench"), "from-the-file");
  EXPECT_EQ(libpq_password("host=127.0.0.1 port=1 user=other dbname=bench"), "");
  EXPECT_EQ(libpq_password("host=127.0.0.1 port=1 user=bench dbname=bench password=own"), "own");
  ::setenv("PGPASSWORD", "from-the-environment", 1);
  EXPECT_EQ(libpq_password("host=127.0.0.1 port=1 user=other dbname=bench"),
            "from-the-environment");
  ::unsetenv("PGPASSFILE");
  if (saved != nullptr) {
    ::setenv("PGPASSWORD", saved_password.c_str(), 1);
  } else {
    ::unsetenv("PGPASSWORD");
  }
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace pgwaitprof::engine
