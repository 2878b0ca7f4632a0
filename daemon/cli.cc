#include "daemon/cli.h"
namespace pgwaitprof::daemon {
int main_cli(int, char**) { return 0; }
}
