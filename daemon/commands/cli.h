// Command-line interface: parses the subcommands and hands each to its command.
#pragma once

#include <string>

namespace pgwaitprof::commands {
int main_cli(int argc, char** argv);
// What --version prints: the version, the git revision it was built from, and the libpq it runs
// with.
std::string version_text();
// A bash completion script for every subcommand and option, made from the same command line
// that parses them (installed as /usr/share/bash-completion/completions/pgwaitprof).
std::string bash_completion();
}  // namespace pgwaitprof::commands
