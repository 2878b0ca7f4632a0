// Supervision of everything pgwaitprof starts, whatever ends pgwaitprof (STYLE.md rule 11).
//
// Signals that can be handled (SIGINT, SIGTERM, SIGHUP, SIGQUIT) interrupt the run and clean up
// in the ordinary way. For the ones that cannot (SIGKILL, the OOM killer), every child is
// started with PR_SET_PDEATHSIG, which the postmaster of a scratch cluster is not: pg_ctl
// daemonizes it. So the first child or scratch directory registered here also starts a
// watchdog: pgwaitprof itself, exec'd as `pgwaitprof __supervise`, in a session of its own
// and deaf to terminal signals, holding the read end of a pipe whose write end only
// pgwaitprof holds. Registrations are lines on that pipe. When the pipe reaches end of file
// (pgwaitprof is gone, however it went) the watchdog signals the process groups still
// registered and, for each scratch directory still registered, stops every process whose
// command line names it (the postmaster with an immediate shutdown) and removes it.
//
// The watchdog is watched in turn: a thread of pgwaitprof waits on its end of the pipe, which
// reports an error the moment the watchdog is gone (killed, the OOM killer). It then starts a
// new watchdog, registers again what is registered and rewrites the owner files; when none can
// be started, pgwaitprof stops itself with SIGTERM, which cleans up as an interrupt does.
//
// The last line of defence is the next invocation: a scratch directory holds an owner file
// (pgwaitprof's and the watchdog's pid and start time), and every pgwaitprof, whatever its
// subcommand, first removes the directories of owners that are both gone (a reboot, or both
// killed at once).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace pgwaitprof::engine {

// The hidden subcommand the watchdog runs as.
inline constexpr std::string_view kSuperviseCommand = "__supervise";

// Lets registrations start the watchdog. Only the pgwaitprof program calls it, since the
// watchdog is the running executable started again (a test binary is not one).
void enable_watchdog();

// The watchdog's main: reads registrations from standard input until end of file, then cleans
// up. Returns the process's exit code.
int supervise_main();

// Registrations (no-ops when the watchdog could not be started: that is logged once, and the
// next invocation's sweep still applies). Called on the thread that spawns children.
void supervise_process_group(pid_t group);
void release_process_group(pid_t group);
void supervise_scratch_directory(const std::filesystem::path& directory);
void release_scratch_directory(const std::filesystem::path& directory);

// The owner file a scratch directory holds, naming this process and its watchdog.
void write_scratch_owner(const std::filesystem::path& directory);

// Stops every process whose command line names `directory` (the postmaster of a cluster there
// with SIGQUIT, an immediate shutdown; the rest with SIGTERM), waits up to `patience` for them
// to exit, then SIGKILLs what is left. Returns how many processes it signalled.
int stop_processes_naming(const std::filesystem::path& directory,
                          std::chrono::milliseconds patience = std::chrono::seconds(10));

// Removes the scratch directories under `temp_directory` whose owner and watchdog are both
// gone (their processes stopped first). Returns the directories it removed.
std::vector<std::filesystem::path> sweep_abandoned_scratch_directories(
    const std::filesystem::path& temp_directory = std::filesystem::temp_directory_path());

// The prefix of a scratch directory's name under the temporary directory.
inline constexpr std::string_view kScratchPrefix = "pgwaitprof-scratch-";

}  // namespace pgwaitprof::engine
