// The marker a matrix leaves on a server while its settings journal (settings_journal.h) is open,
// and why a run or matrix may not start on a server whose marker says an interrupted matrix
// changed its settings: each refusal one line, with what to do.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace pgwaitprof::engine {

// The custom setting that marks an unfinished journal on the server: "HOST:/PATH".
inline constexpr const char* kJournalMarker = "pgwaitprof.settings_journal";

// The marker's value is not "HOST:/PATH".
std::string not_a_journal_message(std::string_view value);
// The journal is on another host.
std::string other_host_message(std::string_view host, const std::filesystem::path& path);
// The journal is on this host and gone or unreadable (deleted; cut short by a kill -9 or a
// crash): `what` ("is missing", "cannot be read (...)"), and how to recover by hand.
std::string lost_journal_message(const std::filesystem::path& path, std::string_view what);
// Another pgwaitprof holds the settings lock: a matrix is running.
std::string matrix_running_message(std::string_view journal);

}  // namespace pgwaitprof::engine
