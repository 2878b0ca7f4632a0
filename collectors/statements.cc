// Statement texts and pg_stat_statements.
#include "collectors/statements.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <vector>

namespace pgwaitprof::collectors {
namespace {

// Known texts are kept to fetch each only once; a workload with endless distinct statements
// stops adding after this many.
constexpr size_t kMaxKnownStatements = 10000;

bool word_character(char character) {
  return std::isalnum(static_cast<unsigned char>(character)) || character == '_' ||
         character == '$';
}

// Whether a '-' written after `out` is a sign (after an operator, '(' or ','), not a minus.
bool unary_position(std::string_view out) {
  const auto last = out.find_last_not_of(' ');
  if (last == std::string_view::npos) return true;
  return std::string_view("+-*/%=<>(,").find(out[last]) != std::string_view::npos;
}

}  // namespace

std::string normalize_statement(std::string_view text, size_t max_length) {
  std::string out;
  for (size_t index = 0; index < text.size(); ++index) {
    const char character = text[index];
    if (character == '\'') {  // a string literal, '' inside it doubled
      for (++index; index < text.size(); ++index) {
        if (text[index] == '\'' && (index + 1 >= text.size() || text[index + 1] != '\'')) break;
        if (text[index] == '\'') ++index;
      }
      out += '?';
    } else if (std::isdigit(static_cast<unsigned char>(character)) &&
               (out.empty() || !word_character(out.back()))) {  // a number, not a1 or $1
      while (
          index + 1 < text.size() &&
          (std::isdigit(static_cast<unsigned char>(text[index + 1])) || text[index + 1] == '.')) {
        ++index;
      }
      out += '?';
    } else if (character == '-' && index + 1 < text.size() &&
               std::isdigit(static_cast<unsigned char>(text[index + 1])) && unary_position(out)) {
      continue;  // the sign of a negative number: part of the literal
    } else if (std::isspace(static_cast<unsigned char>(character))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += character;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() > max_length) out = out.substr(0, max_length - 3) + "...";
  return out;
}

asio::awaitable<CollectResult> StatementTextCollector::collect(CollectContext& context) {
  if (context.latest == nullptr || known_.size() >= kMaxKnownStatements) co_return std::nullopt;
  std::set<int64_t> fresh;
  for (const auto& backend : context.latest->backends) {
    if (backend.query_id && *backend.query_id != 0 && !known_.contains(*backend.query_id)) {
      fresh.insert(*backend.query_id);
    }
  }
  if (fresh.empty()) co_return std::nullopt;
  // Every statement the backends run or last ran now, not only the fresh ids: by the time this
  // query runs, a short statement of the snapshot has made way for the next one, which is as
  // likely to be unknown (without pg_stat_statements' texts, the lookup is all there is).
  auto found = co_await context.session->execute(
      "SELECT DISTINCT ON (query_id) query_id, left(query, 2000) FROM pg_stat_activity"
      " WHERE query_id IS NOT NULL AND query_id <> 0");
  if (!found.ok()) co_return collector_error(*found.error, *context.session);
  std::map<int64_t, std::string> texts;
  const PGresult* result = found.result.get();
  for (int row = 0; row < PQntuples(result); ++row) {
    int64_t id = 0;
    const auto text = cell(result, row, 0);
    if (std::from_chars(text.data(), text.data() + text.size(), id).ec != std::errc()) continue;
    if (known_.contains(id)) continue;
    texts[id] = normalize_statement(cell(result, row, 1));
    known_.insert(id);
  }
  if (!texts.empty()) context.sink->on_statement_texts(texts);
  co_return std::nullopt;
}

asio::awaitable<StatementsAvailability> statements_availability(PgSession& session) {
  StatementsAvailability availability;
  auto found = co_await session.execute(
      "SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'pg_stat_statements'), "
      "current_setting('pg_stat_statements.max', true) IS NOT NULL");
  if (!found.ok()) co_return availability;
  const bool created = cell(found.result.get(), 0, 0) == "t";
  const bool loaded = cell(found.result.get(), 0, 1) == "t";
  availability.usable = created && loaded;
  if (created && !loaded) {
    availability.note = "created but not in shared_preload_libraries";
  }
  co_return availability;
}

asio::awaitable<std::map<int64_t, StatementStats>> read_statement_stats(PgSession& session) {
  std::map<int64_t, StatementStats> stats;
  auto rows = co_await session.execute(
      "SELECT queryid, sum(calls), sum(total_exec_time), min(left(query, 2000))"
      " FROM pg_stat_statements GROUP BY queryid");
  if (!rows.ok()) co_return stats;
  const PGresult* result = rows.result.get();
  for (int row = 0; row < PQntuples(result); ++row) {
    int64_t id = 0;
    const auto id_text = cell(result, row, 0);
    if (std::from_chars(id_text.data(), id_text.data() + id_text.size(), id).ec != std::errc()) {
      continue;
    }
    StatementStats entry;
    const auto calls = cell(result, row, 1);
    std::from_chars(calls.data(), calls.data() + calls.size(), entry.calls);
    const auto total = cell(result, row, 2);
    std::from_chars(total.data(), total.data() + total.size(), entry.total_exec_ms);
    entry.text = normalize_statement(cell(result, row, 3));
    stats[id] = std::move(entry);
  }
  co_return stats;
}

asio::awaitable<std::string> compute_query_id(PgSession& session) {
  auto setting = co_await session.execute("SELECT current_setting('compute_query_id', true)");
  if (!setting.ok()) co_return "";
  co_return cell(setting.result.get(), 0, 0);
}

}  // namespace pgwaitprof::collectors
