// Backends of a real server in every state, read from its shared memory by the memory source and
// compared with pg_stat_activity: for the memory source's tests (MemorySourceTest) and the
// version matrix (every major 13-18).
#pragma once

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <asio.hpp>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "collectors/memory/memory_attach.h"
#include "collectors/pg_session.h"
#include "tests/integration/harness.h"

namespace pgwaitprof::testing {

// A blocking libpq connection of the test's own, for the backends whose states are read.
struct Connection {
  explicit Connection(const std::string& conninfo) : conn(PQconnectdb(conninfo.c_str())) {
    EXPECT_EQ(PQstatus(conn), CONNECTION_OK) << PQerrorMessage(conn);
  }
  ~Connection() {
    if (PGcancel* cancel = PQgetCancel(conn)) {
      char error[256];
      PQcancel(cancel, error, sizeof error);
      PQfreeCancel(cancel);
    }
    PQfinish(conn);
  }
  void exec(const char* sql) {
    PGresult* result = PQexec(conn, sql);
    EXPECT_TRUE(PQresultStatus(result) == PGRES_COMMAND_OK ||
                PQresultStatus(result) == PGRES_TUPLES_OK)
        << sql << ": " << PQerrorMessage(conn);
    PQclear(result);
  }
  void send(const char* sql) { EXPECT_EQ(PQsendQuery(conn, sql), 1) << PQerrorMessage(conn); }
  int pid() const { return PQbackendPID(conn); }
  PGconn* conn;
};

struct Row {
  std::string type, state, wait_type, wait;
  std::string query_id;
};

// pg_stat_activity as a map by pid.
inline asio::awaitable<std::map<int, Row>> activity(collectors::PgSession& session) {
  // Query ids are 14's.
  auto outcome = co_await session.execute(
      std::string("SELECT pid, backend_type, coalesce(state, ''), coalesce(wait_event_type, ''),"
                  " coalesce(wait_event, ''), ") +
      (session.server_version() >= 140000 ? "coalesce(query_id::text, '')" : "''") +
      " FROM pg_stat_activity");
  EXPECT_TRUE(outcome.ok());
  std::map<int, Row> rows;
  for (int index = 0; outcome.ok() && index < PQntuples(outcome.result.get()); ++index) {
    const auto* result = outcome.result.get();
    rows[std::stoi(collectors::cell(result, index, 0))] = {
        collectors::cell(result, index, 1), collectors::cell(result, index, 2),
        collectors::cell(result, index, 3), collectors::cell(result, index, 4),
        collectors::cell(result, index, 5)};
  }
  co_return rows;
}

// One snapshot from memory, named as the source names it, by pid.
inline std::map<int, Row> memory_rows(collectors::memory::Attachment& attachment) {
  std::vector<collectors::memory::RawBackend> backends;
  collectors::memory::ReadCounts counts;
  EXPECT_FALSE(attachment.reader->read(backends, counts));
  std::map<int, Row> rows;
  for (const auto& backend : backends) {
    const auto wait = attachment.names->wait_event(backend.wait_event_info);
    auto type = std::string(attachment.names->backend_type(backend.backend_type));
    if (const auto it = attachment.worker_types.find(backend.pid);
        it != attachment.worker_types.end()) {
      type = it->second;
    }
    rows[backend.pid] = {
        type, std::string(attachment.names->state(backend.state)), std::string(wait.type),
        std::string(wait.name),
        backend.query_id ? std::to_string(static_cast<int64_t>(backend.query_id)) : ""};
  }
  return rows;
}

// Idle, idle in transaction, in pg_sleep, on a CPU and waiting for a lock, each backend read from
// memory (through a view, then by process_vm_readv) as pg_stat_activity shows it, and the
// server's own processes with their types.
inline void expect_every_state_matches(const std::string& conninfo) {
  using namespace std::chrono_literals;
  Connection setup(conninfo);
  setup.exec("CREATE TABLE IF NOT EXISTS memory_source_lock (a int)");
  Connection idle(conninfo);
  Connection in_transaction(conninfo);
  in_transaction.exec("BEGIN");
  in_transaction.exec("LOCK TABLE memory_source_lock IN ACCESS EXCLUSIVE MODE");
  Connection sleeping(conninfo);
  sleeping.send("SELECT pg_sleep(60)");
  Connection on_cpu(conninfo);
  // A loop in PL/pgSQL: CPU only (generate_series would spill its rows to a BufFile).
  on_cpu.send(
      "DO $$DECLARE i bigint := 0; BEGIN WHILE i < 2000000000 LOOP i := i + 1; END LOOP; END$$");
  Connection locked(conninfo);
  locked.send("SELECT * FROM memory_source_lock");
  std::this_thread::sleep_for(500ms);
  run_coroutine([&]() -> asio::awaitable<void> {
    collectors::PgSession session(co_await asio::this_coro::executor);
    EXPECT_FALSE(co_await session.connect(conninfo, 5s));
    auto attached = co_await collectors::memory::attach(session);
    EXPECT_TRUE(attached) << attached.error().message;
    if (!attached) co_return;
    const auto expected = co_await activity(session);
    // Through a view of the segment (root may map it), then by process_vm_readv (the reads of
    // the server's OS user and of CAP_SYS_PTRACE) once the view is dropped.
    for (int pass = 0; pass < 2; ++pass) {
      const bool mapped = pass == 0;
      SCOPED_TRACE(mapped ? "through a view" : "by process_vm_readv");
      if (!mapped) attached->reader->release_memory();
      EXPECT_EQ(attached->reader->memory().mapped(), mapped);
      const auto read = memory_rows(*attached);
      auto check = [&](int pid, const char* what, const char* state, const char* wait_type,
                       const char* wait) {
        SCOPED_TRACE(what);
        ASSERT_TRUE(read.contains(pid));
        ASSERT_TRUE(expected.contains(pid));
        const auto& memory = read.at(pid);
        const auto& server = expected.at(pid);
        EXPECT_EQ(memory.type, server.type);
        EXPECT_EQ(memory.state, server.state);
        EXPECT_EQ(memory.state, state);
        EXPECT_EQ(memory.wait_type, wait_type);
        EXPECT_EQ(memory.wait, wait);
        EXPECT_EQ(memory.wait_type, server.wait_type);
        EXPECT_EQ(memory.wait, server.wait);
        EXPECT_EQ(memory.query_id, server.query_id);
      };
      check(idle.pid(), "idle", "idle", "Client", "ClientRead");
      check(in_transaction.pid(), "idle in transaction", "idle in transaction", "Client",
            "ClientRead");
      check(sleeping.pid(), "active, waiting", "active", "Timeout", "PgSleep");
      check(on_cpu.pid(), "active on a CPU", "active", "", "");
      check(locked.pid(), "waiting for a lock", "active", "Lock", "relation");
      if (session.server_version() >= 140000) {  // query ids are 14's
        EXPECT_FALSE(read.at(sleeping.pid()).query_id.empty());
      }
      // The server's own processes, each as pg_stat_activity names it.
      std::set<std::string> types;
      for (const auto& [pid, row] : read) {
        if (!expected.contains(pid) || pid == session.backend_pid()) continue;
        EXPECT_EQ(row.type, expected.at(pid).type) << "pid " << pid;
        types.insert(row.type);
      }
      for (const char* type :
           {"checkpointer", "background writer", "walwriter", "autovacuum launcher",
            "logical replication launcher", "client backend"}) {
        EXPECT_TRUE(types.contains(type)) << type;
      }
    }
  });
  in_transaction.exec("ROLLBACK");
}

}  // namespace pgwaitprof::testing
