// The control socket's protocol: newline-delimited JSON both ways, at most 64 KiB per request.
//   request  {"type":"run","target":T,"workload":W,"label":L,"pgbench_args":[...],
//             "interval_s":N,"loadgen":"pgbench","loadgen_kind":"pgbench|sysbench|command|none",
//             "setup_step":S,"teardown_step":S,"record_duration_s":N}
//            and later {"type":"interrupt"}
//   events   {"event":"started","run_id":..,"dir":..}  {"event":"line","text":..}
//            {"event":"alive"} (every 5 s, so a client can tell a quiet run from a dead daemon)
//            {"event":"done","dir":..,"status":..,"exit_code":..,"error":..}
//            {"event":"error","code":C,"message":..} with C one of invalid, refused,
//            unknown_target, busy, too_large, timeout
// The socket grants the daemon user's powers to whoever can open it (mode 0600): requests are
// validated as strictly as the configuration file, and pgbench arguments are limited to an
// allow-list (no -f script files, no -l logs or other files written on the daemon's host).
// Pure functions, tested on strings.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/expected.h"
#include "daemon/engine/run_engine.h"

namespace pgwaitprof::service {

inline constexpr size_t kMaxRequestBytes = 64 * 1024;

// A run request line. Errors are one line: "could not parse request: ...", "invalid value for
// "interval_s": ...", "unrecognized key "x"", ...
base::Expected<engine::RunRequest> parse_run_request(std::string_view line);

// Whether a line the client sent during a run asks to interrupt it.
bool is_interrupt_request(std::string_view line);

// Refuses pgbench options outside the allow-list (clients, jobs, duration, transactions, rate,
// protocol, progress, built-in scripts, ...): "pgbench option "-f" is not allowed through the
// control socket".
base::Status check_socket_pgbench_args(const std::vector<std::string>& args);
// The load generator's arguments of a request: pgbench's as above; sysbench's without options
// that choose the database; a command's are its own (its executable is on the allow-list).
base::Status check_socket_loadgen_args(const engine::RunRequest& request);

std::string started_event(const std::string& run_id, const std::string& dir);
std::string line_event(std::string_view text);
std::string alive_event();
std::string done_event(const engine::RunOutcome& outcome);
std::string error_event(std::string_view code, std::string_view message);

// The request line `pgwaitprof run` sends.
std::string run_request_line(const engine::RunRequest& request);
std::string interrupt_request_line();

}  // namespace pgwaitprof::service
