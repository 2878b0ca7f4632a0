// --sampler-host: ssh://[user@]host[:port], and nothing ssh could read as an option.
#include "config/sampler_host.h"

#include <gtest/gtest.h>

#include "config/daemon_config.h"

namespace pgwaitprof::config {
namespace {

TEST(SamplerHost, UserHostAndPort) {
  auto host = parse_sampler_host("ssh://postgres@db-1.example.com:2222");
  ASSERT_TRUE(host) << host.error().message;
  EXPECT_EQ(host->user, "postgres");
  EXPECT_EQ(host->host, "db-1.example.com");
  EXPECT_EQ(host->port, 2222);
  EXPECT_EQ(host->destination(), "postgres@db-1.example.com");
  EXPECT_EQ(host->text(), "ssh://postgres@db-1.example.com:2222");
}

TEST(SamplerHost, HostAloneAndIpv6) {
  auto plain = parse_sampler_host("ssh://10.200.0.2");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->destination(), "10.200.0.2");
  EXPECT_FALSE(plain->port);
  auto six = parse_sampler_host("ssh://[fd00::2]:22");
  ASSERT_TRUE(six) << six.error().message;
  EXPECT_EQ(six->host, "fd00::2");
  EXPECT_EQ(six->port, 22);
}

TEST(SamplerHost, RefusedInOneLine) {
  for (const char* text :
       {"db1", "http://db1", "ssh://", "ssh://-oProxyCommand=x", "ssh://a b", "ssh://db1:0",
        "ssh://db1:99999", "ssh://db1:22x", "ssh://-u@db1", "ssh://u;x@db1", "ssh://[fd00::2"}) {
    auto host = parse_sampler_host(text);
    ASSERT_FALSE(host) << text;
    EXPECT_TRUE(host.error().message.starts_with("invalid sampler host \"")) << text;
    EXPECT_EQ(host.error().message.find('\n'), std::string::npos);
  }
}

// A daemon target's sampler_host and sampler_program; none (or empty) samples from here.
TEST(SamplerHost, DaemonTargetKeys) {
  const auto config = parse_config(
      "targets:\n"
      "  - name: a\n"
      "    sampler_host: ssh://bench@db1:2222/\n"
      "    sampler_program: /opt/pgwaitprof/bin/pgwaitprof\n"
      "  - name: b\n"
      "    sampler_host: \"\"\n"
      "  - name: c\n",
      "p.yaml");
  EXPECT_EQ(config.targets.at(0).sampler_host, "ssh://bench@db1:2222");
  EXPECT_EQ(config.targets.at(0).sampler_program, "/opt/pgwaitprof/bin/pgwaitprof");
  EXPECT_EQ(config.targets.at(1).sampler_host, "");
  EXPECT_EQ(config.targets.at(2).sampler_host, "");
  EXPECT_EQ(config.targets.at(2).sampler_program, "pgwaitprof");
  try {
    parse_config("targets:\n  - sampler_host: ssh://-db1\n", "p.yaml");
    ADD_FAILURE() << "a host ssh could read as an option was taken";
  } catch (const ConfigError& error) {
    EXPECT_STREQ(error.what(),
                 "p.yaml:2:19: invalid value for \"sampler_host\": \"ssh://-db1\" "
                 "(a host may not start with '-')");
  }
}

}  // namespace
}  // namespace pgwaitprof::config
