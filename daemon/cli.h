// Command-line interface: parses the subcommands and hands them to the App or the renderers.
#pragma once

namespace pgwaitprof::daemon {
int main_cli(int argc, char** argv);
}
