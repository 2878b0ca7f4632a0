// Where a run's sampler runs when it is not this host (run --sampler-host, a daemon target's
// sampler_host): ssh://[user@]host[:port], reached with the user's own ssh (its configuration,
// keys and known_hosts). Checked once here, so that nothing that reaches ssh's command line can
// be read as one of its options.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/expected.h"

namespace pgwaitprof::config {

struct SamplerHost {
  std::string user;  // "" = ssh's default (its configuration, or the local user)
  std::string host;  // a name, an IPv4 address, or an IPv6 address without brackets
  std::optional<int> port;
  std::string text() const;  // ssh://[user@]host[:port]
  // ssh's destination: [user@]host
  std::string destination() const;
};

// The error is one line: invalid sampler host "TEXT": WHY.
base::Expected<SamplerHost> parse_sampler_host(std::string_view text);
// The same, whose error is only WHY (a configuration file's message names the key and value).
base::Expected<SamplerHost> read_sampler_host(std::string_view text);

}  // namespace pgwaitprof::config
