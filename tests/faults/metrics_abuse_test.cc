// /metrics under abuse (issue 23 item 8), against the real daemon: connections that trickle a
// header neither keep scrapes out nor stay open past the header deadline. Timing bounds are
// generous: the machine may be loaded.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <thread>

#include "tests/faults/fault_harness.h"

namespace pgwaitprof::testing {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

class MetricsAbuse : public ::testing::Test {
 protected:
  void SetUp() override { require_cluster(); }
};

// A connection that sends a request line and then one header byte every 100 ms, never ending
// the header; how long the server kept it open (or -1 when it was still open after `limit`).
double trickle_header(int port, std::chrono::seconds limit) {
  const int fd = connect_loopback(port);
  if (fd < 0) return -2;
  const auto start = Clock::now();
  send_all(fd, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
  double closed_after = -1;
  while (Clock::now() - start < limit) {
    pollfd wanted{fd, POLLIN, 0};
    // Readable means the server answered (a 400) or closed: either way it gave up on us.
    if (::poll(&wanted, 1, 100) > 0) {
      closed_after = seconds_since(start);
      break;
    }
    if (!send_all(fd, "a")) {
      closed_after = seconds_since(start);
      break;
    }
  }
  ::close(fd);
  return closed_after;
}

TEST_F(MetricsAbuse, SlowHeadersNeitherStarveScrapesNorStayOpen) {
  FaultDaemon daemon("slowloris", "", test_conninfo(), 10);
  ASSERT_TRUE(eventually(15s, [&] { return !scrape(daemon.port).empty(); }))
      << daemon.process->log();
  constexpr int kSlowConnections = 5;
  std::vector<double> closed_after(kSlowConnections, -1);
  std::vector<std::thread> slow;
  for (int index = 0; index < kSlowConnections; ++index) {
    slow.emplace_back([&, index] { closed_after[index] = trickle_header(daemon.port, 20s); });
  }
  // The slow connections have each been taken by a thread of the server.
  std::this_thread::sleep_for(500ms);
  std::vector<double> latencies;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const auto start = Clock::now();
    const auto answer = get_metrics(daemon.port, "", 10s);
    latencies.push_back(seconds_since(start));
    EXPECT_NE(answer.find("pgwaitprof_build_info"), std::string::npos)
        << "scrape " << attempt << " during the slow connections: " << answer.substr(0, 200);
    std::this_thread::sleep_for(200ms);
  }
  for (auto& thread : slow) thread.join();
  std::cout << fmt::format(
      "scrape latency with {} trickling connections: {:.3f} s max; they were closed after "
      "{:.2f} s\n",
      kSlowConnections, *std::max_element(latencies.begin(), latencies.end()),
      fmt::join(closed_after, ", "));
  for (const double latency : latencies) EXPECT_LT(latency, 2.0);
  // The header deadline is 3 s from the connection's start (civetweb checks it after each
  // read, so at worst one more wait of the same length).
  for (const double closed : closed_after) {
    EXPECT_GE(closed, 2.0) << "closed before the deadline";
    EXPECT_LE(closed, 10.0) << "kept open past the deadline (-1: still open after 20 s)";
  }
}

}  // namespace
}  // namespace pgwaitprof::testing
