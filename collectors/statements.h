// Which statement waits on what: statement texts fetched once per new query id from
// pg_stat_activity (never on every snapshot), pg_stat_statements' calls and execution time
// when the extension is installed, and the normalisation that keeps literal values out of
// reports.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>

#include "collectors/collector.h"

namespace pgwaitprof::collectors {

// A statement as reports show it: one line, string and number literals replaced by "?"
// (bind values never appear in pg_stat_activity; literals of the simple protocol would), at
// most `max_length` characters ("..." marks a cut).
std::string normalize_statement(std::string_view text, size_t max_length = 200);

// A target collector: when the latest snapshot shows a query id for the first time, the texts
// of every query id pg_stat_activity shows then (running or last run) that were not known.
class StatementTextCollector : public Collector {
 public:
  std::string_view name() const override { return "statements"; }
  asio::awaitable<CollectResult> collect(CollectContext& context) override;

 private:
  std::set<int64_t> known_;
};

// What pg_stat_statements can give, decided once at a run's start: a view created with CREATE
// EXTENSION fails every query until the library is in shared_preload_libraries (its _PG_init
// defines pg_stat_statements.max only then), so both are checked before it is read at all.
struct StatementsAvailability {
  bool usable = false;
  // Why it is not, for one info line: "created but not in shared_preload_libraries"; "" when
  // it is usable or simply not installed.
  std::string note;
};
asio::awaitable<StatementsAvailability> statements_availability(PgSession& session);

// pg_stat_statements per query id: calls and total execution time (ms); read only where
// statements_availability() found it usable.
struct StatementStats {
  uint64_t calls = 0;
  double total_exec_ms = 0;
  std::string text;
};
asio::awaitable<std::map<int64_t, StatementStats>> read_statement_stats(PgSession& session);

// "on" when the server computes query ids for pg_stat_activity, else the setting's value.
asio::awaitable<std::string> compute_query_id(PgSession& session);

}  // namespace pgwaitprof::collectors
