// Every key the daemon configuration takes (config/daemon_config.cc), for the test that the
// shipped example shows each one. Its own header: daemon_config.h is included by most of the
// program.
#pragma once

#include <string_view>
#include <vector>

namespace pgwaitprof::config {

// The keys of every map: the top level, web, control, results, a target and a run.
std::vector<std::string_view> daemon_config_keys();

}  // namespace pgwaitprof::config
