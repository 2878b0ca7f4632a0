// Validating, applying and restoring a plan's server settings.
#include "daemon/engine/server_settings.h"

#include <fmt/format.h>

#include <algorithm>
#include <asio/experimental/as_tuple.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#include <cctype>
#include <charconv>
#include <cmath>

#include "model/setting_units.h"

namespace pgwaitprof::engine {
namespace {

using namespace std::chrono_literals;

std::string lower(std::string_view text) {
  std::string result(text);
  std::transform(result.begin(), result.end(), result.begin(),
                 [](unsigned char character) { return std::tolower(character); });
  return result;
}

base::Status invalid(const SettingInfo& info, std::string_view value, std::string_view why) {
  return base::Error{
      fmt::format("invalid value for parameter \"{}\": \"{}\" ({})", info.name, value, why)};
}

base::Status check_bool(const SettingInfo& info, std::string_view value) {
  const auto text = lower(value);
  for (const char* word : {"on", "off", "true", "false", "yes", "no", "1", "0"}) {
    if (text == word) return std::nullopt;
  }
  // Unique prefixes of true, false, yes and no are accepted too ("t", "fa").
  for (const char* word : {"true", "false", "yes", "no"}) {
    if (!text.empty() && std::string_view(word).starts_with(text)) return std::nullopt;
  }
  return invalid(info, value, "must be on or off");
}

base::Status check_enum(const SettingInfo& info, std::string_view value) {
  const auto text = lower(value);
  for (const auto& member : info.enumvals) {
    if (lower(member) == text) return std::nullopt;
  }
  std::string members;
  for (const auto& member : info.enumvals) members += (members.empty() ? "" : ", ") + member;
  return invalid(info, value, "must be one of " + members);
}

base::Status check_number(const SettingInfo& info, std::string_view value) {
  std::string_view text = value;
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  double number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc() || !std::isfinite(number)) return invalid(info, value, "not a number");
  std::string_view suffix = text.substr(static_cast<size_t>(end - text.data()));
  while (!suffix.empty() && std::isspace(static_cast<unsigned char>(suffix.front()))) {
    suffix.remove_prefix(1);
  }
  if (info.vartype == "integer" && suffix.empty() && std::floor(number) != number) {
    return invalid(info, value, "must be an integer");
  }
  if (!suffix.empty()) {
    const auto given = model::find_setting_unit(suffix);
    const auto base = model::find_setting_unit(info.unit);
    if (!given || !base || given->memory != base->memory) {
      return invalid(info, value,
                     info.unit.empty() ? "this parameter takes no unit"
                                       : fmt::format("valid units are those of \"{}\"", info.unit));
    }
    number = number * given->factor / base->factor;
  }
  double min = 0, max = 0;
  std::from_chars(info.min_val.data(), info.min_val.data() + info.min_val.size(), min);
  std::from_chars(info.max_val.data(), info.max_val.data() + info.max_val.size(), max);
  if (!info.min_val.empty() && !info.max_val.empty() && (number < min || number > max)) {
    return invalid(info, value,
                   fmt::format("must be between {} and {}{}", info.min_val, info.max_val,
                               info.unit.empty() ? "" : " " + info.unit));
  }
  return std::nullopt;
}

}  // namespace

base::Status check_setting_value(const SettingInfo& info, std::string_view value) {
  if (info.vartype == "bool") return check_bool(info, value);
  if (info.vartype == "enum") return check_enum(info, value);
  if (info.vartype == "integer" || info.vartype == "real") return check_number(info, value);
  return std::nullopt;  // strings: only the server can tell (set_config below, where it may)
}

namespace {

asio::awaitable<base::Expected<SettingInfo>> read_setting_info(collectors::PgSession& session,
                                                               const std::string& name) {
  if (lower(name) == "all") {
    co_return base::Error{"setting \"all\" is not allowed: a plan names the settings it changes"};
  }
  const std::vector<std::string> params{name};
  auto found = co_await session.execute(
      "SELECT name, vartype, coalesce(unit, ''), context, coalesce(min_val, ''),"
      " coalesce(max_val, ''), coalesce(array_to_string(enumvals, E'\\x1f'), '')"
      " FROM pg_settings WHERE lower(name) = lower($1)",
      params);
  if (!found.ok()) co_return base::Error{found.error->message};
  const PGresult* result = found.result.get();
  if (PQntuples(result) != 1) {
    co_return base::Error{fmt::format("unrecognized configuration parameter \"{}\"", name)};
  }
  SettingInfo info{collectors::cell(result, 0, 0),
                   collectors::cell(result, 0, 1),
                   collectors::cell(result, 0, 2),
                   collectors::cell(result, 0, 3),
                   collectors::cell(result, 0, 4),
                   collectors::cell(result, 0, 5),
                   {}};
  const auto members = collectors::cell(result, 0, 6);
  for (size_t start = 0; !members.empty() && start <= members.size();) {
    const auto end = std::min(members.find('\x1f', start), members.size());
    info.enumvals.push_back(members.substr(start, end - start));
    start = end + 1;
  }
  co_return info;
}

// The server's own check, where a session may set the parameter: in a transaction rolled back.
asio::awaitable<base::Status> try_set_config(collectors::PgSession& session,
                                             const SettingInfo& info, const std::string& value) {
  if (info.context != "user" && info.context != "superuser") co_return std::nullopt;
  if (auto begun = co_await session.execute("BEGIN"); !begun.ok()) {
    co_return base::Error{begun.error->message};
  }
  const std::vector<std::string> params{info.name, value};
  auto set = co_await session.execute("SELECT set_config($1, $2, true)", params);
  co_await session.execute("ROLLBACK");
  if (!set.ok()) co_return base::Error{set.error->message};
  co_return std::nullopt;
}

asio::awaitable<base::Status> validate(collectors::PgSession& session, const std::string& name,
                                       const std::set<std::string>& values, bool can_restart) {
  auto info = co_await read_setting_info(session, name);
  if (!info) co_return info.error();
  if (info->context == "internal") {
    co_return base::Error{fmt::format("parameter \"{}\" cannot be changed", info->name)};
  }
  if (info->context == "postmaster" && !can_restart) {
    co_return base::Error{fmt::format(
        "parameter \"{}\" needs a server restart, which pgwaitprof only does on a scratch cluster",
        info->name)};
  }
  for (const auto& value : values) {
    if (auto failed = check_setting_value(*info, value)) co_return failed;
    if (auto failed = co_await try_set_config(session, *info, value)) co_return failed;
  }
  co_return std::nullopt;
}

// postgresql.auto.conf's settings by name (the last of a name wins, as for the server).
asio::awaitable<base::Expected<std::map<std::string, std::string>>> read_auto_conf(
    collectors::PgSession& session) {
  auto entries = co_await read_auto_conf_entries(session, true);
  if (!entries) co_return entries.error();
  std::map<std::string, std::string> settings;
  for (auto& entry : *entries) settings[entry.name] = std::move(entry.value);
  co_return settings;
}

}  // namespace

asio::awaitable<base::Expected<ServerSettings>> ServerSettings::prepare(
    const std::string& conninfo, const std::vector<std::map<std::string, std::string>>& variants,
    bool can_restart, std::optional<std::filesystem::path> journal) {
  std::map<std::string, std::set<std::string>> values;
  for (const auto& variant : variants) {
    for (const auto& [name, value] : variant) values[lower(name)].insert(value);
  }
  ServerSettings settings;
  settings.conninfo_ = conninfo;
  if (values.empty()) co_return settings;
  // First: what a killed matrix left is put back, so the prior state read below is the
  // server's own.
  if (journal) {
    auto opened = co_await SettingsJournal::open(conninfo, *journal);
    if (!opened) co_return opened.error();
    settings.journal_ = std::move(*opened);
  }
  collectors::PgSession session(co_await asio::this_coro::executor);
  if (auto error = co_await session.connect(conninfo, 10s)) {
    co_return base::Error{"could not connect to check the plan's settings: " + error->message};
  }
  for (const auto& [name, candidates] : values) {
    if (auto failed = co_await validate(session, name, candidates, can_restart)) co_return *failed;
  }
  auto auto_conf = co_await read_auto_conf(session);
  if (!auto_conf) co_return auto_conf.error();
  for (const auto& [name, candidates] : values) {
    const auto found = auto_conf->find(name);
    settings.prior_[name] =
        found == auto_conf->end() ? std::nullopt : std::optional<std::string>(found->second);
  }
  settings.current_ = settings.prior_;
  co_return settings;
}

asio::awaitable<base::Expected<std::vector<std::string>>> ServerSettings::apply(
    const std::map<std::string, std::string>& settings) {
  std::map<std::string, std::optional<std::string>> wanted = prior_;
  for (const auto& [name, value] : settings) wanted[lower(name)] = value;
  // The journal's session holds the settings lock; a scratch cluster gets a session per change.
  std::optional<collectors::PgSession> own_session;
  if (!journal_) {
    own_session.emplace(co_await asio::this_coro::executor);
    if (auto error = co_await own_session->connect(conninfo_, 10s)) {
      co_return base::Error{"could not connect to change settings: " + error->message};
    }
  }
  auto& session = journal_ ? journal_->session() : *own_session;
  for (const auto& [name, value] : wanted) {
    if (current_[name] == value) continue;  // untouched lines keep their bytes and their place
    // Written ahead: the journal is durable before the server changes.
    if (journal_) {
      if (auto failed = co_await journal_->begin()) co_return *failed;
    }
    const auto sql =
        value ? fmt::format("ALTER SYSTEM SET {} = {}", name, collectors::quote_literal(*value))
              : "ALTER SYSTEM RESET " + name;
    auto done = co_await session.execute(sql);
    if (!done.ok())
      co_return base::Error{fmt::format("could not run \"{}\": {}", sql, done.error->message)};
    current_[name] = value;
  }
  co_return co_await reload(session);
}

asio::awaitable<base::Expected<std::vector<std::string>>> ServerSettings::restore() {
  if (!journal_) {
    static const std::map<std::string, std::string> kNothing;
    co_return co_await apply(kNothing);
  }
  if (auto failed = co_await journal_->restore(&current_)) co_return *failed;
  current_ = prior_;
  co_return co_await reload(journal_->session());
}

asio::awaitable<base::Expected<std::vector<std::string>>> ServerSettings::reload(
    collectors::PgSession& session) {
  if (auto reloaded = co_await session.execute("SELECT pg_reload_conf()"); !reloaded.ok()) {
    co_return base::Error{"could not reload the configuration: " + reloaded.error->message};
  }
  // The postmaster applies a reload asynchronously and no event tells when: new backends see it
  // soon after.
  asio::steady_timer settle(co_await asio::this_coro::executor, 300ms);
  co_await settle.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
  auto pending = co_await session.execute("SELECT name FROM pg_settings WHERE pending_restart");
  if (!pending.ok()) co_return base::Error{pending.error->message};
  std::vector<std::string> restart;
  for (int row = 0; row < PQntuples(pending.result.get()); ++row) {
    restart.push_back(collectors::cell(pending.result.get(), row, 0));
  }
  co_return restart;
}

}  // namespace pgwaitprof::engine
