// pgwaitprof entry point: all subcommands live in daemon/commands/.
#include "daemon/commands/cli.h"

int main(int argc, char** argv) { return pgwaitprof::commands::main_cli(argc, argv); }
