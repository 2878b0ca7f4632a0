// `pgwaitprof __sample-remote`: the remote end of run --sampler-host, started over SSH by the
// load generator's host (daemon/engine/remote_sampler.h), never by a user. It speaks
// store/sample_wire.h's messages on its stdin and stdout: a hello naming its protocol and
// version, its host's description, answers to the clock pings, then, given the start message
// (the target, with its password: never on this command line), a sampler of the server with
// the best source of this host (auto's choice, as `run` makes it: memory where it can, else
// pg_stat_activity) and its kernel view, every sample streamed back. It exits when its stdin
// ends, so nothing of it outlives the channel.
#pragma once

#include <string_view>

namespace pgwaitprof::commands {

inline constexpr std::string_view kSampleRemoteCommand = "__sample-remote";

// The exit code: 0 after end of file, 3 when the other end speaks another protocol, 1 when the
// channel failed.
int sample_remote_main();

}  // namespace pgwaitprof::commands
