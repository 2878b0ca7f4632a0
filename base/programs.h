// The programs pgwaitprof runs (pgbench, psql, initdb, pg_ctl): finding one on PATH or in
// Debian's PostgreSQL bin directories, and saying how one ended.
#pragma once

#include <string>

namespace pgwaitprof::base {

// The first executable named `name` on PATH, then in PostgreSQL's bin directories (newest
// first); "" when there is none. A name with a slash is returned as it is if executable.
std::string find_executable(const std::string& name);

// "was killed by signal 9 (SIGKILL)" or "exited with code 3": what an exit code means (a shell's
// 128 + N for a signal).
std::string describe_exit(int exit_code);

}  // namespace pgwaitprof::base
