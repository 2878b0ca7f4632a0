// The settings journal: recorded before a matrix changes a server, restored however it ended.
#include "daemon/engine/settings_journal.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <asio/experimental/as_tuple.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "base/logging.h"
#include "store/atomic_file.h"

namespace pgwaitprof::engine {
namespace {

using namespace std::chrono_literals;
using collectors::PgSession;

// pg_try_advisory_lock(int4, int4): 'pgwp' and the settings journal's number.
constexpr const char* kLockKeys = "1886877552, 1";

auto log() {
  static auto logger = base::component_logger("settings");
  return logger;
}

// Settings whose ALTER SYSTEM value is a list of identifiers, each quoted by the server when it
// is not a plain one (GUC_LIST_QUOTE): set again element by element so the file reads the same.
bool list_quoted(std::string_view name) {
  for (const char* listed : {"search_path", "temp_tablespaces", "session_preload_libraries",
                             "shared_preload_libraries", "local_preload_libraries"}) {
    if (name == listed) return true;
  }
  return false;
}

// The elements of a list setting's value as SplitIdentifierString reads it ("a, \"B c\"").
std::vector<std::string> list_elements(std::string_view value) {
  std::vector<std::string> elements;
  size_t at = 0;
  auto skip_space = [&] {
    while (at < value.size() && std::isspace(static_cast<unsigned char>(value[at]))) ++at;
  };
  while (true) {
    skip_space();
    if (at >= value.size()) break;
    std::string element;
    if (value[at] == '"') {
      for (++at; at < value.size(); ++at) {
        if (value[at] == '"') {
          if (at + 1 < value.size() && value[at + 1] == '"') {
            element += '"';
            ++at;
          } else {
            ++at;
            break;
          }
        } else {
          element += value[at];
        }
      }
    } else {
      while (at < value.size() && value[at] != ',') element += value[at++];
      while (!element.empty() && std::isspace(static_cast<unsigned char>(element.back()))) {
        element.pop_back();
      }
    }
    elements.push_back(element);
    skip_space();
    if (at < value.size() && value[at] == ',') ++at;
  }
  return elements;
}

// A setting's name in SQL: as it is when it is a plain (dotted) identifier, else quoted.
std::string setting_name_sql(std::string_view name) {
  const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](char character) {
    return std::islower(static_cast<unsigned char>(character)) ||
           std::isdigit(static_cast<unsigned char>(character)) || character == '_' ||
           character == '.';
  });
  if (plain) return std::string(name);
  std::string quoted = "\"";
  for (const char character : name)
    quoted += character == '"' ? std::string("\"\"") : std::string(1, character);
  return quoted + "\"";
}

std::string set_sql(const AutoConfEntry& entry) {
  std::string value;
  if (list_quoted(entry.name)) {
    for (const auto& element : list_elements(entry.value)) {
      value += (value.empty() ? "" : ", ") + collectors::quote_literal(element);
    }
  }
  if (value.empty()) value = collectors::quote_literal(entry.value);
  return fmt::format("ALTER SYSTEM SET {} = {}", setting_name_sql(entry.name), value);
}

std::string to_hex(std::string_view bytes) {
  std::string hex;
  for (const unsigned char byte : bytes) hex += fmt::format("{:02x}", byte);
  return hex;
}

std::optional<std::string> from_hex(std::string_view hex) {
  if (hex.starts_with("\\x")) hex.remove_prefix(2);
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string bytes;
  for (size_t at = 0; at < hex.size(); at += 2) {
    unsigned value = 0;
    const auto [end, error] = std::from_chars(hex.data() + at, hex.data() + at + 2, value, 16);
    if (error != std::errc() || end != hex.data() + at + 2) return std::nullopt;
    bytes.push_back(static_cast<char>(value));
  }
  return bytes;
}

// postgresql.auto.conf's bytes; nullopt when the role may not read server files.
asio::awaitable<std::optional<std::string>> read_bytes(PgSession& session) {
  auto read =
      co_await session.execute("SELECT encode(pg_read_binary_file('postgresql.auto.conf'), 'hex')");
  if (!read.ok()) co_return std::nullopt;
  co_return from_hex(collectors::cell(read.result.get(), 0, 0));
}

asio::awaitable<std::optional<std::string>> read_marker(PgSession& session) {
  const std::vector<std::string> params{kJournalMarker};
  auto found = co_await session.execute(
      "SELECT setting FROM pg_file_settings WHERE name = $1 AND error IS NULL"
      " ORDER BY seqno DESC LIMIT 1",
      params);
  // A role that may not read pg_file_settings sees the marker once the server reloaded.
  if (!found.ok()) found = co_await session.execute("SELECT current_setting($1, true)", params);
  if (!found.ok() || PQntuples(found.result.get()) == 0) co_return std::nullopt;
  auto value = collectors::cell(found.result.get(), 0, 0);
  if (value.empty()) co_return std::nullopt;
  co_return value;
}

// The settings lock. A matrix killed a moment ago may still hold it until its backend has seen
// the connection close: a few tries, 200 ms apart.
asio::awaitable<bool> try_lock(PgSession& session) {
  asio::steady_timer pause(co_await asio::this_coro::executor);
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (attempt > 0) {
      pause.expires_after(200ms);
      co_await pause.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
    }
    auto locked =
        co_await session.execute(fmt::format("SELECT pg_try_advisory_lock({})", kLockKeys));
    if (locked.ok() && collectors::cell(locked.result.get(), 0, 0) == "t") co_return true;
  }
  co_return false;
}

asio::awaitable<void> unlock(PgSession& session) {
  (void)co_await session.execute(fmt::format("SELECT pg_advisory_unlock({})", kLockKeys));
}

// ALTER SYSTEM (before PostgreSQL 17) only knows a custom setting (the marker, an extension's
// setting whose library this session did not load) once the session has a placeholder for it:
// set_config makes one. A real setting that may not be set here refuses; that is ignored.
asio::awaitable<void> declare_custom_settings(PgSession& session,
                                              const std::vector<std::string>& names) {
  for (const auto& name : names) {
    if (name.find('.') == std::string::npos) continue;
    const std::vector<std::string> params{name};
    (void)co_await session.execute(
        "SELECT set_config($1, coalesce(current_setting($1, true), ''), false)", params);
  }
}

asio::awaitable<base::Status> execute_sql(PgSession& session, const std::string& sql) {
  auto done = co_await session.execute(sql);
  if (!done.ok())
    co_return base::Error{fmt::format("could not run \"{}\": {}", sql, done.error->message)};
  co_return std::nullopt;
}

// The original bytes written over the file by the server (lo_export, superuser), in a
// transaction rolled back so that no large object stays behind.
asio::awaitable<base::Status> write_bytes(PgSession& session, const std::string& bytes) {
  if (auto failed = co_await execute_sql(session, "BEGIN")) co_return failed;
  const std::vector<std::string> params{to_hex(bytes)};
  auto written = co_await session.execute(
      "SELECT lo_export(lo_from_bytea(0, decode($1, 'hex')),"
      " current_setting('data_directory') || '/postgresql.auto.conf')",
      params);
  (void)co_await session.execute("ROLLBACK");
  if (!written.ok()) co_return base::Error{written.error->message};
  co_return std::nullopt;
}

// The server back to `record`: settings replayed in their order, then the bytes checked and,
// where they still differ, written back. The journal file at `path` goes once all is back.
asio::awaitable<base::Status> restore_to(PgSession& session, const JournalRecord& record,
                                         const std::filesystem::path& path) {
  auto current = co_await read_auto_conf_entries(session, true);
  if (!current) co_return current.error();
  std::vector<std::string> names{kJournalMarker};
  for (const auto& entry : *current) names.push_back(entry.name);
  for (const auto& entry : record.entries) names.push_back(entry.name);
  co_await declare_custom_settings(session, names);
  for (const auto& sql : replay_statements(*current, record.entries)) {
    if (auto failed = co_await execute_sql(session, sql)) co_return failed;
  }
  if (auto failed = co_await execute_sql(session, "SELECT pg_reload_conf()")) co_return failed;
  if (record.bytes && co_await read_bytes(session) != record.bytes) {
    // Not a file ALTER SYSTEM wrote (comments, other quoting): its settings are back, its
    // bytes come from the journal.
    const auto write_failed = co_await write_bytes(session, *record.bytes);
    if (!write_failed) (void)co_await execute_sql(session, "SELECT pg_reload_conf()");
    if (write_failed || co_await read_bytes(session) != record.bytes) {
      co_return base::Error{fmt::format(
          "could not restore \"postgresql.auto.conf\" byte for byte (its settings are back): {}; "
          "the original is in \"{}\"",
          write_failed ? write_failed->message : "it still differs", path.string())};
    }
  }
  std::error_code error;
  std::filesystem::remove(path, error);
  if (error && error != std::errc::no_such_file_or_directory) {
    log()->warn("could not remove settings journal \"{}\": {}", path.string(), error.message());
  }
  co_return std::nullopt;
}

// A marker found on the server, restored from its journal on this host.
asio::awaitable<base::Status> restore_marked(PgSession& session, const std::string& value) {
  const auto marker = parse_marker(value);
  if (!marker) {
    co_return base::Error{fmt::format(
        "server setting \"{}\" is not a pgwaitprof journal: \"{}\"\nHINT: Remove it with ALTER "
        "SYSTEM RESET {}.",
        kJournalMarker, value, kJournalMarker)};
  }
  if (marker->host != journal_host()) {
    co_return base::Error{fmt::format(
        "the server's settings were changed by an unfinished pgwaitprof matrix on host \"{}\" "
        "(journal \"{}\")\nHINT: Run any pgwaitprof command against this server on that host to "
        "restore them.",
        marker->host, marker->path.string())};
  }
  std::ifstream file(marker->path);
  if (!file) {
    co_return base::Error{fmt::format("could not open settings journal \"{}\": {}",
                                      marker->path.string(), std::strerror(errno))};
  }
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  auto record = journal_from_json(text);
  if (!record) co_return record.error();
  if (auto failed = co_await restore_to(session, *record, marker->path)) co_return failed;
  log()->warn("restored the server settings an interrupted matrix had changed journal=\"{}\"",
              marker->path.string());
  co_return std::nullopt;
}

}  // namespace

asio::awaitable<base::Expected<std::vector<AutoConfEntry>>> read_auto_conf_entries(
    PgSession& session, bool with_marker) {
  auto rows = co_await session.execute(
      "SELECT lower(name), setting FROM pg_file_settings"
      " WHERE sourcefile LIKE '%/postgresql.auto.conf' ORDER BY seqno");
  if (!rows.ok()) {
    co_return base::Error{"could not read the server's ALTER SYSTEM settings (pg_file_settings): " +
                          rows.error->message};
  }
  std::vector<AutoConfEntry> entries;
  for (int row = 0; row < PQntuples(rows.result.get()); ++row) {
    AutoConfEntry entry{collectors::cell(rows.result.get(), row, 0),
                        collectors::cell(rows.result.get(), row, 1)};
    if (with_marker || entry.name != kJournalMarker) entries.push_back(std::move(entry));
  }
  co_return entries;
}

std::string journal_to_json(const JournalRecord& record) {
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& entry : record.entries) entries.push_back({entry.name, entry.value});
  nlohmann::json json = {{"host", record.host}, {"target", record.target}, {"entries", entries}};
  json["auto_conf_hex"] = record.bytes ? nlohmann::json(to_hex(*record.bytes)) : nlohmann::json();
  return json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

base::Expected<JournalRecord> journal_from_json(const std::string& text) {
  try {
    const auto json = nlohmann::json::parse(text);
    JournalRecord record;
    record.host = json.at("host").get<std::string>();
    record.target = json.value("target", "");
    for (const auto& entry : json.at("entries")) {
      record.entries.push_back({entry.at(0).get<std::string>(), entry.at(1).get<std::string>()});
    }
    if (json.contains("auto_conf_hex") && json["auto_conf_hex"].is_string()) {
      record.bytes = from_hex(json["auto_conf_hex"].get<std::string>());
      if (!record.bytes) return base::Error{"settings journal: auto_conf_hex is not hexadecimal"};
    }
    return record;
  } catch (const std::exception& error) {
    return base::Error{fmt::format("could not read settings journal: {}", error.what())};
  }
}

std::vector<std::string> replay_statements(const std::vector<AutoConfEntry>& current,
                                           const std::vector<AutoConfEntry>& original) {
  size_t same = 0;
  while (same < current.size() && same < original.size() && current[same] == original[same]) {
    ++same;
  }
  std::vector<std::string> statements;
  std::set<std::string> reset;
  bool marker = false;
  for (size_t index = same; index < current.size(); ++index) {
    const auto& name = current[index].name;
    if (name == kJournalMarker) {
      marker = true;
    } else if (reset.insert(name).second) {
      statements.push_back("ALTER SYSTEM RESET " + setting_name_sql(name));
    }
  }
  for (size_t index = same; index < original.size(); ++index) {
    statements.push_back(set_sql(original[index]));
  }
  // Last: until everything else is back, the server says a journal is unfinished.
  if (marker) statements.push_back(std::string("ALTER SYSTEM RESET ") + kJournalMarker);
  return statements;
}

std::optional<MarkerValue> parse_marker(const std::string& value) {
  const auto colon = value.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= value.size() ||
      value[colon + 1] != '/') {
    return std::nullopt;
  }
  return MarkerValue{value.substr(0, colon), value.substr(colon + 1)};
}

std::string journal_host() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

asio::awaitable<base::Expected<std::unique_ptr<SettingsJournal>>> SettingsJournal::open(
    const std::string& conninfo, std::filesystem::path path) {
  std::unique_ptr<SettingsJournal> journal(new SettingsJournal(std::move(path)));
  journal->session_ = std::make_unique<PgSession>(co_await asio::this_coro::executor);
  auto& session = *journal->session_;
  if (auto error = co_await session.connect(conninfo, 10s)) {
    co_return base::Error{"could not connect to change settings: " + error->message};
  }
  if (!co_await try_lock(session)) {
    co_return base::Error{
        "another pgwaitprof is changing this server's settings (it holds the settings lock)\n"
        "HINT: Wait for its matrix to end, or stop it."};
  }
  if (auto marker = co_await read_marker(session)) {
    if (auto failed = co_await restore_marked(session, *marker)) co_return *failed;
  }
  auto entries = co_await read_auto_conf_entries(session, false);
  if (!entries) co_return entries.error();
  journal->record_.entries = std::move(*entries);
  journal->record_.bytes = co_await read_bytes(session);
  journal->record_.host = journal_host();
  journal->record_.target = collectors::mask_password(conninfo);
  co_return std::move(journal);
}

SettingsJournal::~SettingsJournal() = default;

asio::awaitable<base::Status> SettingsJournal::begin() {
  if (begun_) co_return std::nullopt;
  if (auto failed = store::write_file_atomically(path_, journal_to_json(record_))) co_return failed;
  const auto marker = fmt::format("{}:{}", record_.host, std::filesystem::absolute(path_).string());
  const std::vector<std::string> marker_name{kJournalMarker};
  co_await declare_custom_settings(*session_, marker_name);
  if (auto failed =
          co_await execute_sql(*session_, fmt::format("ALTER SYSTEM SET {} = {}", kJournalMarker,
                                                      collectors::quote_literal(marker)))) {
    co_return failed;
  }
  if (auto failed = co_await execute_sql(*session_, "SELECT pg_reload_conf()")) co_return failed;
  begun_ = true;
  co_return std::nullopt;
}

asio::awaitable<base::Status> SettingsJournal::alter_system(const std::string& sql) {
  co_return co_await execute_sql(*session_, sql);
}

asio::awaitable<base::Status> SettingsJournal::restore() {
  if (!begun_) co_return std::nullopt;
  if (auto failed = co_await restore_to(*session_, record_, path_)) co_return failed;
  begun_ = false;
  co_return std::nullopt;
}

asio::awaitable<base::Status> recover_abandoned_settings(PgSession& session) {
  const auto marker = co_await read_marker(session);
  if (!marker) co_return std::nullopt;
  if (!co_await try_lock(session)) {
    co_return base::Error{fmt::format(
        "a running pgwaitprof matrix is changing this server's settings (journal \"{}\")\n"
        "HINT: Wait for the matrix to end, or stop it.",
        *marker)};
  }
  auto restored = co_await restore_marked(session, *marker);
  co_await unlock(session);
  co_return restored;
}

}  // namespace pgwaitprof::engine
