// pgwaitprof_completion: prints the bash completion script of pgwaitprof's command line; the
// build runs it to make the file the package installs (deploy/package.cmake).
#include <iostream>

#include "daemon/commands/completion.h"

int main() {
  std::cout << pgwaitprof::commands::bash_completion();
  return std::cout.flush() ? 0 : 1;
}
