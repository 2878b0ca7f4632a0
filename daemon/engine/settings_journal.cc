// The settings journal: recorded before a matrix changes a server, restored however it ended.
#include "daemon/engine/settings_journal.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
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
#include <map>
#include <nlohmann/json.hpp>

#include "base/logging.h"
#include "base/regular_file.h"
#include "collectors/kernel.h"
#include "daemon/engine/settings_marker.h"
#include "store/atomic_file.h"

namespace pgwaitprof::engine {
namespace {

using namespace std::chrono_literals;
using collectors::PgSession;

// pg_try_advisory_lock(int4, int4): 'pgwp' and the settings journal's number.
constexpr const char* kLockKeys = "1886877552, 1";

auto settings_journal_log() {
  static auto logger = base::component_logger("settings");
  return logger;
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

// postgresql.auto.conf as the server reads it: its bytes, nullopt when there is no such file,
// an error when the role may not read server files.
asio::awaitable<base::Expected<std::optional<std::string>>> read_bytes(PgSession& session) {
  auto read = co_await session.execute(
      "SELECT (pg_stat_file('postgresql.auto.conf', true)).size IS NULL,"
      " CASE WHEN (pg_stat_file('postgresql.auto.conf', true)).size IS NOT NULL"
      " THEN encode(pg_read_binary_file('postgresql.auto.conf'), 'hex') END");
  if (!read.ok()) co_return base::Error{read.error->message};
  if (collectors::cell(read.result.get(), 0, 0) == "t") co_return std::optional<std::string>();
  auto bytes = from_hex(collectors::cell(read.result.get(), 0, 1));
  if (!bytes) co_return base::Error{"pg_read_binary_file did not return hexadecimal"};
  co_return std::optional<std::string>(std::move(*bytes));
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

// The server's data directory where the server runs on this host and this process may write
// its files as the server's OS user (as that user, or as root); nullopt otherwise.
struct LocalDataDirectory {
  std::filesystem::path path;
  store::FileOwner owner;
};
asio::awaitable<std::optional<LocalDataDirectory>> local_data_directory(PgSession& session) {
  auto directory = co_await session.execute("SELECT current_setting('data_directory', true)");
  if (!directory.ok()) co_return std::nullopt;
  const std::string path = collectors::cell(directory.result.get(), 0, 0);
  if (!collectors::server_is_local(session.backend_pid(), path)) co_return std::nullopt;
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0 || !S_ISDIR(status.st_mode)) co_return std::nullopt;
  if (::geteuid() != 0 && ::geteuid() != status.st_uid) co_return std::nullopt;
  co_return LocalDataDirectory{path, {status.st_uid, status.st_gid}};
}

// The local route: the file replaced atomically, owned by the data directory's owner with the
// mode the file has now (the server's own, 0600 or 0640); a missing original is removed.
base::Status write_local_file(const LocalDataDirectory& directory,
                              const std::optional<std::string>& bytes) {
  const auto path = directory.path / "postgresql.auto.conf";
  if (!bytes) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return base::Error{
          fmt::format("could not remove file \"{}\": {}", path.string(), std::strerror(errno))};
    }
    const int dir_fd = ::open(directory.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd >= 0) {
      ::fsync(dir_fd);
      ::close(dir_fd);
    }
    return std::nullopt;
  }
  struct stat status {};
  const mode_t mode = ::stat(path.c_str(), &status) == 0 ? (status.st_mode & 0777) : 0600;
  return store::write_file_atomically(path, *bytes, mode, directory.owner);
}

// The remote route: the server writes the bytes itself (lo_export: superuser or
// pg_write_server_files). The large object is created, exported and unlinked by separate
// statements of one transaction: lo_export in the statement that created the object does not
// see it ("large object N does not exist"), its snapshot being older than the object.
asio::awaitable<base::Status> write_by_large_object(PgSession& session,
                                                    const std::optional<std::string>& bytes) {
  if (auto failed = co_await execute_sql(session, "BEGIN")) co_return failed;
  std::optional<collectors::PgError> error;
  const std::vector<std::string> content{to_hex(bytes.value_or(""))};
  auto created = co_await session.execute("SELECT lo_from_bytea(0, decode($1, 'hex'))", content);
  if (created.ok()) {
    const std::vector<std::string> object{collectors::cell(created.result.get(), 0, 0)};
    auto exported = co_await session.execute(
        "SELECT lo_export($1::oid, current_setting('data_directory') || '/postgresql.auto.conf')",
        object);
    if (exported.ok()) {
      auto unlinked = co_await session.execute("SELECT lo_unlink($1::oid)", object);
      if (!unlinked.ok()) error = unlinked.error;
    } else {
      error = exported.error;
    }
  } else {
    error = created.error;
  }
  if (error) {
    (void)co_await session.execute("ROLLBACK");
    co_return base::Error{error->message};
  }
  co_return co_await execute_sql(session, "COMMIT");
}

// The bytes the server reads now are `bytes` (a missing original: no file, or an empty one
// where only SQL could write it).
asio::awaitable<base::Status> check_bytes(PgSession& session,
                                          const std::optional<std::string>& bytes) {
  auto now = co_await read_bytes(session);
  if (!now) co_return base::Error{"could not read it back: " + now.error().message};
  const bool same = bytes ? *now == bytes : (!*now || (*now)->empty());
  if (!same) co_return base::Error{"it still differs from the journal's copy"};
  co_return std::nullopt;
}

// The server back to `record`: settings replayed in their order, then, where the journal has
// the file's bytes, the bytes written back whole and read back. The marker and the journal file
// at `path` go only once all is back; otherwise both stay for the next invocation. With what
// the matrix `applied` (its values of the settings it touches), a line another session changed
// meanwhile is kept and named in a warning, and the rest is put back around it by ALTER SYSTEM
// (which rewrote the whole file when the other session ran it).
asio::awaitable<base::Status> restore_to(
    PgSession& session, const JournalRecord& record, const std::filesystem::path& path,
    const std::map<std::string, std::optional<std::string>>* applied = nullptr) {
  // Whatever fails, the journal and its marker stay: the message says where the journal is.
  auto kept = [&path](const std::string& reason) {
    return base::Error{fmt::format(
        "could not restore the server's settings from settings journal \"{}\" (kept for the "
        "next pgwaitprof against this server): {}",
        path.string(), reason)};
  };
  auto current = co_await read_auto_conf_entries(session, true);
  if (!current) co_return kept(current.error().message);
  std::vector<std::string> names{kJournalMarker};
  for (const auto& entry : *current) names.push_back(entry.name);
  for (const auto& entry : record.entries) names.push_back(entry.name);
  co_await declare_custom_settings(session, names);
  KeptChanges changes{record.entries, {}};
  if (applied) changes = other_sessions_changes(record.entries, *current, *applied);
  const bool bytes_known = changes.names.empty() && (record.bytes || record.missing);
  for (const auto& sql : replay_statements(*current, changes.target, bytes_known)) {
    if (auto failed = co_await execute_sql(session, sql)) co_return kept(failed->message);
  }
  if (bytes_known) {
    // The original bytes hold no marker: written back, they end the journal on the server.
    const std::optional<std::string> original = record.missing ? std::nullopt : record.bytes;
    if (auto failed = co_await write_auto_conf(session, original)) {
      (void)co_await execute_sql(session, "SELECT pg_reload_conf()");
      co_return base::Error{fmt::format(
          "could not restore \"postgresql.auto.conf\" of the server byte for byte ({}); its "
          "original is kept in settings journal \"{}\" and the next pgwaitprof against this "
          "server tries again",
          failed->message, path.string())};
    }
  }
  if (auto failed = co_await execute_sql(session, "SELECT pg_reload_conf()")) co_return failed;
  if (!changes.names.empty()) {
    settings_journal_log()->warn(
        "kept what another session changed with ALTER SYSTEM while the matrix ran: {}",
        fmt::join(changes.names, ", "));
  }
  std::error_code error;
  std::filesystem::remove(path, error);
  if (error && error != std::errc::no_such_file_or_directory) {
    settings_journal_log()->warn("could not remove settings journal \"{}\": {}", path.string(),
                                 error.message());
  }
  co_return std::nullopt;
}

// A marker found on the server, restored from its journal on this host.
asio::awaitable<base::Status> restore_marked(PgSession& session, const std::string& value) {
  const auto marker = parse_marker(value);
  if (!marker) {
    co_return base::Error{not_a_journal_message(value)};
  }
  if (marker->host != journal_host()) {
    co_return base::Error{other_host_message(marker->host, marker->path)};
  }
  std::error_code missing;
  if (!std::filesystem::exists(marker->path, missing) && !missing) {
    co_return base::Error{lost_journal_message(marker->path, "is missing")};
  }
  const auto text = base::read_regular_file(marker->path, "settings journal");
  if (!text) co_return text.error();
  auto record = journal_from_json(*text);
  if (!record) {
    co_return base::Error{lost_journal_message(
        marker->path, fmt::format("cannot be read ({})", record.error().message))};
  }
  if (auto failed = co_await restore_to(session, *record, marker->path)) co_return failed;
  settings_journal_log()->warn(
      "restored the server settings an interrupted matrix had changed journal=\"{}\"",
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
  if (record.missing) json["auto_conf_missing"] = true;
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
    record.missing = json.value("auto_conf_missing", false);
    return record;
  } catch (const std::exception& error) {
    return base::Error{fmt::format("could not read settings journal: {}", error.what())};
  }
}

asio::awaitable<base::Status> write_auto_conf(PgSession& session,
                                              const std::optional<std::string>& bytes,
                                              AutoConfRoute route) {
  std::optional<std::string> local_failure;
  if (route != AutoConfRoute::kLargeObject) {
    if (const auto directory = co_await local_data_directory(session)) {
      auto failed = write_local_file(*directory, bytes);
      if (!failed) co_return co_await check_bytes(session, bytes);
      local_failure = failed->message;
    } else if (route == AutoConfRoute::kLocalFile) {
      co_return base::Error{"the server's data directory is not writable from this host"};
    }
  }
  if (route == AutoConfRoute::kLocalFile) co_return base::Error{*local_failure};
  if (auto failed = co_await write_by_large_object(session, bytes)) {
    co_return base::Error{local_failure ? *local_failure + "; " + failed->message
                                        : failed->message};
  }
  co_return co_await check_bytes(session, bytes);
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
  if (auto bytes = co_await read_bytes(session)) {
    journal->record_.bytes = *bytes;
    journal->record_.missing = !*bytes;
  }
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
    // Nothing changed on the server (a read-only postgresql.auto.conf refuses ALTER SYSTEM):
    // no journal either.
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
    co_return failed;
  }
  if (auto failed = co_await execute_sql(*session_, "SELECT pg_reload_conf()")) co_return failed;
  begun_ = true;
  co_return std::nullopt;
}

asio::awaitable<base::Status> SettingsJournal::alter_system(const std::string& sql) {
  co_return co_await execute_sql(*session_, sql);
}

asio::awaitable<base::Status> SettingsJournal::restore(
    const std::map<std::string, std::optional<std::string>>* applied) {
  if (!begun_) co_return std::nullopt;
  if (auto failed = co_await restore_to(*session_, record_, path_, applied)) co_return failed;
  begun_ = false;
  co_return std::nullopt;
}

asio::awaitable<base::Status> recover_abandoned_settings(PgSession& session) {
  const auto marker = co_await read_marker(session);
  if (!marker) co_return std::nullopt;
  if (!co_await try_lock(session)) {
    co_return base::Error{matrix_running_message(*marker)};
  }
  auto restored = co_await restore_marked(session, *marker);
  co_await unlock(session);
  co_return restored;
}

}  // namespace pgwaitprof::engine
