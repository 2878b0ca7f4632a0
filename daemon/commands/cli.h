// Command-line interface: parses the subcommands and hands each to its command.
#pragma once

namespace pgwaitprof::commands {
int main_cli(int argc, char** argv);
}  // namespace pgwaitprof::commands
