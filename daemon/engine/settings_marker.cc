// The settings journal marker's refusals.
#include "daemon/engine/settings_marker.h"

#include <fmt/format.h>

namespace pgwaitprof::engine {

std::string not_a_journal_message(std::string_view value) {
  return fmt::format(
      "server setting \"{}\" is not a pgwaitprof journal: \"{}\"; remove it with ALTER SYSTEM "
      "RESET {} and SELECT pg_reload_conf()",
      kJournalMarker, value, kJournalMarker);
}

std::string other_host_message(std::string_view host, const std::filesystem::path& path) {
  return fmt::format(
      "the server's settings were changed by an unfinished pgwaitprof matrix on host \"{}\" "
      "(journal \"{}\"); run any pgwaitprof command against this server on that host to restore "
      "them",
      host, path.string());
}

std::string lost_journal_message(const std::filesystem::path& path, std::string_view what) {
  // Its original settings went with the journal: only the user can say which of the server's
  // ALTER SYSTEM settings are the matrix's. Removing the marker lets runs start again.
  return fmt::format(
      "settings journal \"{}\" of an interrupted pgwaitprof matrix {}, so the server's settings "
      "from before the matrix cannot be restored; check its ALTER SYSTEM settings (SELECT name, "
      "setting FROM pg_file_settings WHERE sourcefile LIKE '%postgresql.auto.conf'), reset what "
      "the matrix changed, then run ALTER SYSTEM RESET {} and SELECT pg_reload_conf()",
      path.string(), what, kJournalMarker);
}

std::string matrix_running_message(std::string_view journal) {
  return fmt::format(
      "a running pgwaitprof matrix is changing this server's settings (journal \"{}\"); wait for "
      "the matrix to end, or stop it",
      journal);
}

}  // namespace pgwaitprof::engine
