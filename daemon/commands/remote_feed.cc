// --sampler-host into an SSH feed.
#include "daemon/commands/remote_feed.h"

#include "config/sampler_host.h"

namespace pgwaitprof::commands {

std::unique_ptr<engine::SshFeed> make_remote_feed(const std::string& sampler_host,
                                                  const std::string& program,
                                                  asio::any_io_executor executor) {
  if (sampler_host.empty()) return nullptr;
  engine::RemoteSamplerOptions options;
  options.host = *config::parse_sampler_host(sampler_host);
  options.program = program;
  options.ssh_command = engine::ssh_command_from_environment();
  return std::make_unique<engine::SshFeed>(executor, std::move(options));
}

}  // namespace pgwaitprof::commands
