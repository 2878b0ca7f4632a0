// PgSession's libpq paths against the real scratch server: queries with parameters, prepared
// statements and scripts; errors as values with their SQLSTATE; a connect timeout against a
// server that never answers; a backend terminated in the middle of a query.
#include "collectors/pg_session.h"

#include <sys/socket.h>

#include <asio.hpp>

#include "tests/integration/harness.h"

namespace pgwaitprof::testing {
namespace {

using namespace std::chrono_literals;
using collectors::PgSession;

class PgSessionTest : public ::testing::Test {
 protected:
  void SetUp() override { require_cluster(); }
};

TEST_F(PgSessionTest, QueriesParametersPreparedStatementsAndScripts) {
  run_coroutine([&]() -> asio::awaitable<void> {
    PgSession session(co_await asio::this_coro::executor);
    const auto error = co_await session.connect(test_conninfo(), 5s);
    EXPECT_FALSE(error) << error->message;
    EXPECT_TRUE(session.connected());
    EXPECT_GE(session.server_version(), 130000);
    EXPECT_GT(session.backend_pid(), 0);
    std::vector<std::string> params{"20", "22"};
    auto sum = co_await session.execute("SELECT $1::int + $2::int", params);
    EXPECT_TRUE(sum.ok());
    EXPECT_EQ(collectors::cell(sum.result.get(), 0, 0), "42");
    EXPECT_FALSE(co_await session.prepare("twice", "SELECT $1::int * 2"));
    std::vector<std::string> one{"21"};
    auto prepared = co_await session.execute_prepared("twice", one);
    EXPECT_EQ(collectors::cell(prepared.result.get(), 0, 0), "42");
    auto script = co_await session.execute_script(
        "CREATE TEMP TABLE t (a int); INSERT INTO t VALUES (1), (2); SELECT sum(a) FROM t;");
    EXPECT_TRUE(script.ok());
    EXPECT_EQ(collectors::cell(script.result.get(), 0, 0), "3");
    auto null = co_await session.execute("SELECT NULL::text");
    EXPECT_EQ(collectors::cell(null.result.get(), 0, 0), "");
  });
}

// ensure_prepared() prepares a statement once a connection: the second call sends nothing (one
// statement more on the session, not two); a statement prepared already by prepare() is taken as
// it is; a new connection has none, so the same name is prepared again after a reconnect.
TEST_F(PgSessionTest, EnsurePreparedPlansOnceAConnection) {
  run_coroutine([&]() -> asio::awaitable<void> {
    PgSession session(co_await asio::this_coro::executor);
    EXPECT_FALSE(co_await session.connect(test_conninfo(), 5s));
    const auto before = session.statements();
    EXPECT_FALSE(co_await session.ensure_prepared("three", "SELECT 3"));
    EXPECT_EQ(session.statements(), before + 1);
    EXPECT_FALSE(co_await session.ensure_prepared("three", "SELECT 3"));
    EXPECT_EQ(session.statements(), before + 1);
    auto three = co_await session.execute_prepared("three");
    EXPECT_EQ(collectors::cell(three.result.get(), 0, 0), "3");
    EXPECT_FALSE(co_await session.prepare("four", "SELECT 4"));
    EXPECT_FALSE(co_await session.ensure_prepared("four", "SELECT 4"));
    // A bad statement is an error each time it is asked for, not a name taken.
    const auto bad = co_await session.ensure_prepared("bad", "SELECT * FROM no_such_table");
    EXPECT_TRUE(bad);
    EXPECT_EQ(bad.value_or(collectors::PgError{}).sqlstate, "42P01");
    EXPECT_TRUE(co_await session.ensure_prepared("bad", "SELECT * FROM no_such_table"));

    EXPECT_FALSE(co_await session.connect(test_conninfo(), 5s));
    const auto again = session.statements();
    EXPECT_FALSE(co_await session.ensure_prepared("three", "SELECT 3"));
    EXPECT_EQ(session.statements(), again + 1);
    three = co_await session.execute_prepared("three");
    EXPECT_TRUE(three.ok()) << three.error->message;
    EXPECT_EQ(collectors::cell(three.result.get(), 0, 0), "3");
  });
}

TEST_F(PgSessionTest, ServerErrorsAreValuesWithTheirSqlstate) {
  run_coroutine([&]() -> asio::awaitable<void> {
    PgSession session(co_await asio::this_coro::executor);
    EXPECT_FALSE(co_await session.connect(test_conninfo(), 5s));
    auto division = co_await session.execute("SELECT 1/0");
    EXPECT_FALSE(division.ok());
    EXPECT_EQ(division.error->sqlstate, "22012");
    EXPECT_NE(division.error->message.find("division by zero"), std::string::npos);
    EXPECT_EQ(division.error->message.find('\n'), std::string::npos) << "one line";
    // The session is still usable after an error.
    auto after = co_await session.execute("SELECT 1");
    EXPECT_TRUE(after.ok());
    auto missing = co_await session.execute("SELECT * FROM no_such_table");
    EXPECT_EQ(missing.error->sqlstate, "42P01");
  });
}

TEST_F(PgSessionTest, ConnectTimesOutAgainstAServerThatNeverAnswers) {
  // A listening socket nobody accepts on: the TCP handshake completes in the kernel, then
  // libpq waits for the server's answer forever.
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(listener, 8), 0);
  socklen_t length = sizeof(address);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  const std::string conninfo = "host=127.0.0.1 port=" + std::to_string(ntohs(address.sin_port)) +
                               " dbname=x user=x sslmode=disable";
  const auto started = std::chrono::steady_clock::now();
  run_coroutine([&]() -> asio::awaitable<void> {
    PgSession session(co_await asio::this_coro::executor);
    const auto error = co_await session.connect(conninfo, 500ms);
    EXPECT_TRUE(error);
    if (error) {
      EXPECT_TRUE(error->sqlstate.empty());
      EXPECT_NE(error->message.find("timeout"), std::string::npos) << error->message;
    }
    EXPECT_FALSE(session.connected());
  });
  const auto elapsed = std::chrono::steady_clock::now() - started;
  EXPECT_LT(elapsed, 5s);
  ::close(listener);
}

TEST_F(PgSessionTest, ABackendTerminatedMidQueryIsAnErrorNotACrash) {
  run_coroutine([&]() -> asio::awaitable<void> {
    PgSession session(co_await asio::this_coro::executor);
    EXPECT_FALSE(co_await session.connect(test_conninfo() + " application_name=victim", 5s));
    const int pid = session.backend_pid();
    std::thread killer([pid] {
      std::this_thread::sleep_for(300ms);
      psql("SELECT pg_terminate_backend(" + std::to_string(pid) + ")");
    });
    auto sleeping = co_await session.execute("SELECT pg_sleep(10)");
    killer.join();
    EXPECT_FALSE(sleeping.ok());
    if (!sleeping.ok()) {
      EXPECT_EQ(sleeping.error->sqlstate, "57P01") << sleeping.error->message;  // admin_shutdown
    }
    // The next query on the dead connection fails as a value too.
    auto next = co_await session.execute("SELECT 1");
    EXPECT_FALSE(next.ok());
  });
}

}  // namespace
}  // namespace pgwaitprof::testing
