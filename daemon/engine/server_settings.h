// Server settings a matrix plan changes, and the guarantee that the server is left as it was
// found: before the first run, every setting name is checked against pg_settings ("all" and
// unknown names refused) and every value is validated without being applied; the prior
// ALTER SYSTEM state of each setting (its line in postgresql.auto.conf, or none) is recorded.
// On a server that outlives pgwaitprof the prior state is journaled before the first change
// (settings_journal.h), and restore() brings the file back byte for byte from the journal, also
// after a SIGKILL (then by the next pgwaitprof). A scratch cluster, which goes with pgwaitprof,
// has no journal: restore() there resets the touched settings.
#pragma once

#include <asio/awaitable.hpp>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.h"
#include "collectors/pg_session.h"
#include "daemon/engine/settings_journal.h"

namespace pgwaitprof::engine {

// What pg_settings says of one setting: enough to validate a value without applying it.
struct SettingInfo {
  std::string name;
  std::string vartype;  // bool, enum, integer, real, string
  std::string unit;     // "8kB", "kB", "ms", "s", "min", ... or ""
  std::string context;  // internal, postmaster, sighup, superuser, user, ...
  std::string min_val, max_val;
  std::vector<std::string> enumvals;
};

// Validates `value` as the server's parser would read it for `info`: boolean spellings, enum
// members, numbers with units within the setting's range. The error is one line:
// `invalid value for parameter "NAME": "VALUE" (...)`.
base::Status check_setting_value(const SettingInfo& info, std::string_view value);

class ServerSettings {
 public:
  // Validates the plan's settings (every variant's) against the server and records the prior
  // ALTER SYSTEM state; nothing is changed. `can_restart`: settings that need a restart are
  // allowed (a scratch cluster). `journal`: where the journal goes (none: a scratch cluster);
  // opening it restores what a killed matrix left, or refuses while another one runs.
  static asio::awaitable<base::Expected<ServerSettings>> prepare(
      const std::string& conninfo, const std::vector<std::map<std::string, std::string>>& variants,
      bool can_restart, std::optional<std::filesystem::path> journal = std::nullopt);

  // Puts the server in `settings`; every other touched setting back to its prior state. Then a
  // reload. Returns the settings that wait for a restart (pending_restart).
  asio::awaitable<base::Expected<std::vector<std::string>>> apply(
      const std::map<std::string, std::string>& settings);
  // The server back to its prior state (from the journal, byte for byte, where there is one),
  // then a reload. Returns the settings that wait for a restart.
  asio::awaitable<base::Expected<std::vector<std::string>>> restore();

  bool empty() const { return prior_.empty(); }
  // Whether this matrix holds the server's settings lock (its runs must not wait for it).
  bool journaled() const { return journal_ != nullptr; }

 private:
  // pg_reload_conf(), then the settings that wait for a restart.
  static asio::awaitable<base::Expected<std::vector<std::string>>> reload(
      collectors::PgSession& session);
  std::string conninfo_;
  std::unique_ptr<SettingsJournal> journal_;
  // Per setting the plan touches: its value in postgresql.auto.conf, or none.
  std::map<std::string, std::optional<std::string>> prior_;
  std::map<std::string, std::optional<std::string>> current_;
};

}  // namespace pgwaitprof::engine
