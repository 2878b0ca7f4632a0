// pgwaitprof entry point: all subcommands live in daemon/cli.cc.
#include "daemon/cli.h"

int main(int argc, char** argv) { return pgwaitprof::daemon::main_cli(argc, argv); }
