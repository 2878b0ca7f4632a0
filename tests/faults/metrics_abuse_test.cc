// /metrics under abuse (issue 23 items 8 and 9), against the real daemon: connections that
// trickle a header neither keep scrapes out nor stay open past the header deadline; a 401 takes
// as long for an unknown user as for a wrong password; a flood of wrong passwords does not
// keep a known scraper waiting; a flood of clients that reconnect at once with half a request
// line leaves a scraper answered within a second. Timing bounds are generous: the machine may
// be loaded.
#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <sstream>
#include <thread>

#include "tests/faults/fault_harness.h"

namespace pgwaitprof::testing {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
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
      "scrape latency with {} trickling connections: {:.1f} ms max; they were closed after "
      "{:.2f} s\n",
      kSlowConnections, *std::max_element(latencies.begin(), latencies.end()) * 1e3,
      fmt::join(closed_after, ", "));
  for (const double latency : latencies) EXPECT_LT(latency, 2.0);
  // The header deadline is 1 s from the connection's accept.
  for (const double closed : closed_after) {
    EXPECT_GE(closed, 0.8) << "closed before the deadline";
    EXPECT_LE(closed, 5.0) << "kept open past the deadline (-1: still open after 20 s)";
  }
}

// A TCP connection to 127.0.0.1:port that gives up after `timeout` (a full listen backlog makes
// a blocking connect wait for SYN retries); -1 when it did not connect in time.
int connect_within(int port, std::chrono::milliseconds timeout) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    pollfd wanted{fd, POLLOUT, 0};
    int error = 0;
    socklen_t length = sizeof error;
    if (errno != EINPROGRESS || ::poll(&wanted, 1, static_cast<int>(timeout.count())) <= 0 ||
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) {
      ::close(fd);
      return -1;
    }
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

// GET /metrics, the connection and the answer within `timeout` together: the answer ("" when
// it did not come whole in time) and how long the connection took (-1: it never connected).
struct Scrape {
  std::string answer;
  double connected_after = -1;
};
Scrape scrape_within(int port, std::chrono::milliseconds timeout) {
  const auto start = Clock::now();
  const int fd = connect_within(port, timeout);
  if (fd < 0) return {};
  Scrape scrape{"", seconds_since(start)};
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(timeout - (Clock::now() - start));
  if (left.count() > 0 && send_all(fd, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")) {
    scrape.answer = read_to_eof(fd, left);
  }
  ::close(fd);
  return scrape;
}

// The kernel's count of connections dropped because a listen queue was full (TcpExt
// ListenOverflows in /proc/net/netstat, all sockets of this network namespace).
uint64_t listen_overflows() {
  std::istringstream netstat(read_text("/proc/net/netstat"));
  std::string names;
  std::string values;
  while (std::getline(netstat, names) && std::getline(netstat, values)) {
    if (!names.starts_with("TcpExt:")) continue;
    std::istringstream name_fields(names);
    std::istringstream value_fields(values);
    std::string name;
    std::string value;
    while (name_fields >> name && value_fields >> value) {
      if (name == "ListenOverflows") return std::stoull(value);
    }
  }
  return 0;
}

// Issue 40 item 5: four clients that each open a connection, send half a request line and
// reconnect at once, keeping up to 200 connections open each. Before, behind civetweb's thread
// per connection, a real scrape got nothing in 10 s; now each scrape is answered whole within
// a second.
TEST_F(MetricsAbuse, AReconnectingFloodDoesNotKeepAScraperOut) {
  FaultDaemon daemon("reconnecting-flood", "", test_conninfo(), 10);
  ASSERT_TRUE(eventually(15s, [&] { return !scrape(daemon.port).empty(); }))
      << daemon.process->log();
  constexpr int kFloodThreads = 4;
  std::atomic<bool> stop{false};
  std::atomic<int> opened{0};
  std::vector<std::thread> flood;
  for (int index = 0; index < kFloodThreads; ++index) {
    flood.emplace_back([&] {
      std::deque<int> open;
      while (!stop) {
        const int fd = connect_within(daemon.port, 200ms);
        if (fd < 0) continue;
        ++opened;
        send_all(fd, "GET /metr");
        open.push_back(fd);
        if (open.size() > 200) {
          ::close(open.front());
          open.pop_front();
        }
      }
      for (const int fd : open) ::close(fd);
    });
  }
  std::this_thread::sleep_for(1s);
  // What is tested is that a flood does not keep a scraper out (before: nothing in 10 s), not
  // how fast a scrape is: that is a figure, printed below. On a quiet machine the program as
  // shipped answers within a second (median 0.14 s, max 0.33 s); the sanitizer build beside CI's
  // other lanes took a median 0.51 s and once past 3 s, and the release build with seven
  // processes runnable on the two CPUs of CI (2026-12-07) connected in no second twice (a SYN
  // dropped by the full listen queue is sent again after 1 s, then 3 s). Five seconds for both.
  const auto budget = 5s;
  std::vector<double> latencies;
  std::vector<double> connects;
  std::vector<std::string> failures;
  const uint64_t overflows_before = listen_overflows();
  for (int attempt = 0; attempt < 5; ++attempt) {
    const auto start = Clock::now();
    const auto scrape = scrape_within(daemon.port, budget);
    latencies.push_back(seconds_since(start));
    connects.push_back(scrape.connected_after);
    if (!scrape.answer.starts_with("HTTP/1.1 200") ||
        scrape.answer.find("pgwaitprof_build_info") == std::string::npos) {
      failures.push_back(fmt::format("scrape {} after {:.2f} s (connected after {:.2f} s): \"{}\"",
                                     attempt, latencies.back(), scrape.connected_after,
                                     scrape.answer.substr(0, 100)));
    }
    std::this_thread::sleep_for(200ms);
  }
  const uint64_t overflows = listen_overflows() - overflows_before;
  stop = true;
  for (auto& thread : flood) thread.join();
  std::cout << fmt::format(
      "scrape latency beside {} reconnecting clients ({} connections opened): median {:.1f} ms, "
      "max {:.1f} ms; connected after {:.3f} s; {} connections dropped by full listen queues\n",
      kFloodThreads, opened.load(), median(latencies) * 1e3,
      *std::max_element(latencies.begin(), latencies.end()) * 1e3, fmt::join(connects, ", "),
      overflows);
  EXPECT_TRUE(failures.empty()) << fmt::format("{}", fmt::join(failures, "\n"));
  // The daemon is still whole.
  EXPECT_FALSE(daemon.process->wait(0s).has_value()) << daemon.process->log();
}

TEST_F(MetricsAbuse, AnUnknownUserIsRejectedAsSlowlyAsAWrongPassword) {
  FaultDaemon daemon("auth-timing",
                     basic_auth_config({{"prometheus", bcrypt_hash("scrape-pw", 7)}}),
                     test_conninfo(), 10);
  ASSERT_TRUE(eventually(15s, [&] {
    return get_metrics(daemon.port, "prometheus:scrape-pw").starts_with("HTTP/1.1 200");
  })) << daemon.process->log();
  std::vector<double> unknown;
  std::vector<double> wrong;
  auto rejected_in = [&](const std::string& credentials, std::vector<double>& times) {
    const auto start = Clock::now();
    const auto answer = get_metrics(daemon.port, credentials);
    times.push_back(seconds_since(start));
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 401")) << credentials << ": " << answer;
  };
  // Interleaved, so that both see the same load.
  for (int attempt = 0; attempt < 20; ++attempt) {
    rejected_in("nobody:wrong-pw", unknown);
    rejected_in("prometheus:wrong-pw", wrong);
  }
  const double ratio = median(unknown) / median(wrong);
  std::cout << fmt::format(
      "401 median over 20: unknown user {:.1f} ms, known user with a wrong password {:.1f} ms, "
      "ratio {:.2f}\n",
      median(unknown) * 1e3, median(wrong) * 1e3, ratio);
  EXPECT_GT(ratio, 0.3);
  EXPECT_LT(ratio, 3.0);
}

TEST_F(MetricsAbuse, AFloodOfWrongPasswordsDoesNotKeepAKnownScraperWaiting) {
  FaultDaemon daemon("auth-flood",
                     basic_auth_config({{"prometheus", bcrypt_hash("scrape-pw", 10)},
                                        {"grafana", bcrypt_hash("other-pw", 10)}}),
                     test_conninfo(), 10);
  // The scraper's first scrape verifies its password (bcrypt at cost 10, as
  // docs/security-and-reliability.md makes hashes).
  ASSERT_TRUE(eventually(15s, [&] {
    return get_metrics(daemon.port, "prometheus:scrape-pw").starts_with("HTTP/1.1 200");
  })) << daemon.process->log();
  constexpr int kFloodThreads = 20;
  std::atomic<bool> stop{false};
  std::atomic<int> attempts{0};
  std::vector<std::thread> flood;
  for (int index = 0; index < kFloodThreads; ++index) {
    flood.emplace_back([&, index] {
      // The known user's: before issue 23 only those cost a bcrypt (an unknown user's did not).
      const std::string credentials = fmt::format("prometheus:guess-{}", index);
      while (!stop) {
        get_metrics(daemon.port, credentials, 10s);
        ++attempts;
        std::this_thread::sleep_for(20ms);
      }
    });
  }
  std::this_thread::sleep_for(1s);
  // What is tested is that a flood does not keep a scraper out (before: nothing in 10 s), not
  // how fast a scrape is: that is a figure, printed below. On a quiet machine the program as
  // shipped answers within a second (median 0.14 s, max 0.33 s); the sanitizer build beside CI's
  // other lanes took a median 0.51 s and once past 3 s, and the release build with seven
  // processes runnable on the two CPUs of CI (2026-12-07) connected in no second twice (a SYN
  // dropped by the full listen queue is sent again after 1 s, then 3 s). Five seconds for both.
  const auto budget = 5s;
  std::vector<double> latencies;
  std::vector<std::string> failures;
  for (int attempt = 0; attempt < 5; ++attempt) {
    const auto start = Clock::now();
    const auto answer = get_metrics(daemon.port, "prometheus:scrape-pw", 15s);
    latencies.push_back(seconds_since(start));
    if (!answer.starts_with("HTTP/1.1 200")) failures.push_back(answer.substr(0, 100));
    std::this_thread::sleep_for(300ms);
  }
  // A scraper on another host (127.0.0.2) whose password is not remembered yet: the flooding
  // host may keep only two checks pending, so this one gets a turn.
  const auto first_start = Clock::now();
  const auto first = get_metrics(daemon.port, "grafana:other-pw", 15s, "127.0.0.2");
  const double first_latency = seconds_since(first_start);
  stop = true;
  for (auto& thread : flood) thread.join();
  std::cout << fmt::format(
      "scrape latency during {} threads of wrong passwords ({} attempts): median {:.1f} ms, max "
      "{:.1f} ms; a new scraper on another host: {:.0f} ms\n",
      kFloodThreads, attempts.load(), median(latencies) * 1e3,
      *std::max_element(latencies.begin(), latencies.end()) * 1e3, first_latency * 1e3);
  EXPECT_TRUE(failures.empty()) << fmt::format("{}", fmt::join(failures, "\n"));
  // Before issue 23 every check waited for the one before it: 1.6 s here, 5-7 s in the issue.
  for (const double latency : latencies) EXPECT_LT(latency, 1.0);
  EXPECT_TRUE(first.starts_with("HTTP/1.1 200")) << first.substr(0, 100);
  // Its own bcrypt and at most the two of the flooding host before it, on a loaded machine.
  EXPECT_LT(first_latency, 5.0);
  // The daemon said why some checks were refused without hashing.
  EXPECT_NE(daemon.process->log().find("basic auth checks refused while the queue was full"),
            std::string::npos)
      << daemon.process->log();
}

}  // namespace
}  // namespace pgwaitprof::testing
