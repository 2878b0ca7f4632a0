// Where `run` and `matrix` find the server and sample it: --local (whether the server is on this
// host) and --sampler-host (the sampler on the server's host over SSH, the load generator here)
// with --sampler-program (the pgwaitprof there).
#pragma once

#include <CLI/CLI.hpp>

#include "daemon/commands/matrix_command.h"
#include "daemon/commands/run_command.h"

namespace pgwaitprof::commands {

void add_placement_options(CLI::App& run, RunCommand& command);
// --sampler-host and --sampler-program of `matrix`.
void add_matrix_placement_options(CLI::App& matrix, MatrixCommand& command);

}  // namespace pgwaitprof::commands
