// The bash completion script of every subcommand and option.
#pragma once

#include <string>

namespace pgwaitprof::commands {
// A bash completion script for every subcommand and option, made from the same command line
// that parses them (installed as /usr/share/bash-completion/completions/pgwaitprof).
std::string bash_completion();
}  // namespace pgwaitprof::commands
