// The SSH command of a remote sampler (no password on it, BatchMode) and the clock offset from
// the fastest ping.
#include "daemon/engine/remote_sampler.h"

#include <gtest/gtest.h>

#include <algorithm>

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

}  // namespace
}  // namespace pgwaitprof::engine
