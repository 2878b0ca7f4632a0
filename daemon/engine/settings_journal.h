// A write-ahead journal of the server settings a matrix changes, so that the server is left as
// it was found however the matrix ends (a SIGKILL, the OOM killer, a reboot included).
//
// Before the first ALTER SYSTEM of a matrix, the server's prior state (the bytes of
// postgresql.auto.conf where the role may read them, and its settings in file order) is written
// durably next to the matrix (settings-journal.json), and then a marker is set on the server
// itself: the custom setting pgwaitprof.settings_journal = 'HOST:PATH' (only where the journal
// is, never the values: any role can read a custom setting). While the matrix runs it holds a
// session-level advisory lock on a connection of its own; a dead matrix's lock goes with its
// connection. Every pgwaitprof that touches the server (matrix, --resume, run, the daemon's
// runs) first looks for the marker: with the lock free it restores the journal, with the lock
// held it refuses. Restoring replays ALTER SYSTEM so the settings come back in their order, then,
// where the journal holds the file's bytes, writes them back whole: on a local server as a file
// of the server's OS user (temporary file, fsync, rename, fsync of the directory), else through
// a large object created, exported and unlinked in one transaction. The file is read back; only
// when its bytes are the journal's do the marker (which the original bytes do not hold) and then
// the journal file go. Otherwise both stay, the error names the file and the journal, and the
// next pgwaitprof against the server tries again before anything else.
#pragma once

#include <asio/awaitable.hpp>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/expected.h"
#include "collectors/pg_session.h"
#include "daemon/engine/auto_conf.h"
#include "daemon/engine/settings_marker.h"

namespace pgwaitprof::engine {

// postgresql.auto.conf's settings in file order, as pg_file_settings shows them; the journal's
// marker left out unless `with_marker`.
asio::awaitable<base::Expected<std::vector<AutoConfEntry>>> read_auto_conf_entries(
    collectors::PgSession& session, bool with_marker);

// What the journal keeps of the server before the matrix changed it.
struct JournalRecord {
  std::string host;                    // where the journal file is
  std::string target;                  // the server, password masked
  std::optional<std::string> bytes;    // postgresql.auto.conf, when the role could read it
  bool missing = false;                // the server had no postgresql.auto.conf at all
  std::vector<AutoConfEntry> entries;  // its settings in file order, the marker left out
};
std::string journal_to_json(const JournalRecord& record);
base::Expected<JournalRecord> journal_from_json(const std::string& text);

// How the original bytes of postgresql.auto.conf are written back: the local file where the
// server runs on this host and this process may write as its OS user, else a large object.
enum class AutoConfRoute { kAny, kLocalFile, kLargeObject };

// Writes `bytes` (nullopt: the file is removed, or emptied where only SQL reaches it) over the
// server's postgresql.auto.conf by `route`, and reads it back: an error unless the server's
// file now holds exactly those bytes. Does not reload the configuration.
asio::awaitable<base::Status> write_auto_conf(collectors::PgSession& session,
                                              const std::optional<std::string>& bytes,
                                              AutoConfRoute route = AutoConfRoute::kAny);

// "HOST:PATH" of a marker, split; nullopt when it is not one.
struct MarkerValue {
  std::string host;
  std::filesystem::path path;
};
std::optional<MarkerValue> parse_marker(const std::string& value);

// This host's name, as journals and markers record it.
std::string journal_host();

class SettingsJournal {
 public:
  // Connects a session of its own, takes the settings lock (refused, one line, when another
  // pgwaitprof holds it), restores what a dead matrix left, and reads the server's state.
  static asio::awaitable<base::Expected<std::unique_ptr<SettingsJournal>>> open(
      const std::string& conninfo, std::filesystem::path path);
  SettingsJournal(const SettingsJournal&) = delete;
  SettingsJournal& operator=(const SettingsJournal&) = delete;
  ~SettingsJournal();

  // The journal file, then the marker: before the first change. Idempotent.
  asio::awaitable<base::Status> begin();
  // Runs one ALTER SYSTEM on the lock's session.
  asio::awaitable<base::Status> alter_system(const std::string& sql);
  // The server back to the journal, checked byte for byte where the file can be read; the
  // marker and the journal file go only then. Idempotent. `applied`: the matrix's values of the
  // settings it touches (none: reset); with them, a line another session changed meanwhile is
  // kept (auto_conf.h) and named in a warning.
  asio::awaitable<base::Status> restore(
      const std::map<std::string, std::optional<std::string>>* applied = nullptr);
  collectors::PgSession& session() { return *session_; }

 private:
  explicit SettingsJournal(std::filesystem::path path) : path_(std::move(path)) {}
  std::unique_ptr<collectors::PgSession> session_;
  std::filesystem::path path_;
  JournalRecord record_;
  bool begun_ = false;
};

// What every pgwaitprof does first on a server it may change or benchmark: when the server
// carries an unfinished journal's marker and no pgwaitprof holds the settings lock, restore the
// journal (logged); when one holds it, refuse with one line. `session` is connected.
asio::awaitable<base::Status> recover_abandoned_settings(collectors::PgSession& session);

}  // namespace pgwaitprof::engine
