// --local, --sampler-host and --sampler-program of `run`.
#include "daemon/commands/placement_options.h"

#include "config/sampler_host.h"

namespace pgwaitprof::commands {

void add_placement_options(CLI::App& run, RunCommand& command) {
  run.add_option("--local", command.local,
                 "whether the server runs on this host, for its /proc: auto, true or false")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, config::LocalMode>{{"auto", config::LocalMode::kAuto},
                                                   {"true", config::LocalMode::kYes},
                                                   {"false", config::LocalMode::kNo}}))
      ->option_text("auto|true|false");
  run.add_option("--sampler-host", command.sampler_host,
                 "sample the server on its own host over SSH (the load generator runs here): "
                 "ssh://[user@]host[:port], with your ssh configuration and keys")
      ->check([](const std::string& text) {
        auto host = config::parse_sampler_host(text);
        return host ? std::string() : host.error().message;
      });
  run.add_option("--sampler-program", command.sampler_program,
                 "the pgwaitprof on the sampler host (default: pgwaitprof on its PATH)");
}

}  // namespace pgwaitprof::commands
