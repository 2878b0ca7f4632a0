// The sampler on the server's host of `run` and `matrix` (--sampler-host), made in one place.
#pragma once

#include <asio/any_io_executor.hpp>
#include <memory>
#include <string>

#include "daemon/engine/remote_sampler.h"

namespace pgwaitprof::commands {

// The feed for `sampler_host` (checked by the CLI), or none for "".
std::unique_ptr<engine::SshFeed> make_remote_feed(const std::string& sampler_host,
                                                  const std::string& program,
                                                  asio::any_io_executor executor);

}  // namespace pgwaitprof::commands
