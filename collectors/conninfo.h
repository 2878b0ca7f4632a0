// Connection strings as text (libpq's own parser reads them): passwords masked for logs,
// reports and process lists, a string split for a child process, SQL literals.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace pgwaitprof::collectors {

// A connection string or URI for logs and reports, read by libpq's own parser
// (PQconninfoParse): with a password (or sslpassword) it is rebuilt in keyword form with the
// value masked, "host=db1 password=********"; without one it is returned as written. A string
// libpq cannot parse is masked as text (mask_secrets).
std::string mask_password(const std::string& conninfo);
// Every password in a text that may quote a connection string (libpq's and pgbench's error
// messages do, e.g. `invalid URI: "postgresql://u:secret@[::1"`) masked, wherever it appears:
// keyword values read as libpq reads them (quoted, or bare with backslash escapes), a URI's
// user info and its password query parameter, percent-encoded or not.
std::string mask_secrets(std::string_view text);
// mask_secrets() over memory that must keep its length (the process's own argv, which every
// local user reads in /proc/PID/cmdline): each secret byte becomes '*', so the password's
// length stays visible. If libpq would still read a password in the result, all of it is '*'.
void mask_secrets_in_place(std::span<char> text);

// A connection string split for a child process: the string without its password (so it can go
// in an argv, which every local user can read in /proc) and the password (for PGPASSWORD in the
// child's environment, readable only by its owner). A string libpq cannot parse is returned
// whole, with no password: the child reports the syntax error itself.
struct ConninfoWithoutPassword {
  std::string conninfo;
  std::string password;  // "" when the string has none
};
ConninfoWithoutPassword split_password(const std::string& conninfo);

// A string literal for SQL text where no parameter can go (ALTER SYSTEM): quotes doubled, and
// E'...' with backslashes doubled when it has any, as PQescapeLiteral writes it.
std::string quote_literal(std::string_view value);

}  // namespace pgwaitprof::collectors
