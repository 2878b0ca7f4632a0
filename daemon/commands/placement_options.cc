// --local, --sampler-host and --sampler-program of `run`.
#include "daemon/commands/placement_options.h"

#include "config/sampler_host.h"

namespace pgwaitprof::commands {

namespace {

void add_sampler_host(CLI::App& command, std::string& sampler_host, std::string& program) {
  command
      .add_option("--sampler-host", sampler_host,
                  "sample the server on its own host over SSH (the load generator runs here): "
                  "ssh://[user@]host[:port], with your ssh configuration and keys")
      ->check([](const std::string& text) {
        auto host = config::parse_sampler_host(text);
        return host ? std::string() : host.error().message;
      });
  command.add_option("--sampler-program", program,
                     "the pgwaitprof on the sampler host (default: pgwaitprof on its PATH)");
}

}  // namespace

void add_placement_options(CLI::App& run, RunCommand& command) {
  run.add_option("--local", command.local,
                 "whether the server runs on this host, for its /proc: auto, true or false")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, config::LocalMode>{{"auto", config::LocalMode::kAuto},
                                                   {"true", config::LocalMode::kYes},
                                                   {"false", config::LocalMode::kNo}}))
      ->option_text("auto|true|false");
  add_sampler_host(run, command.sampler_host, command.sampler_program);
}

void add_matrix_placement_options(CLI::App& matrix, MatrixCommand& command) {
  add_sampler_host(matrix, command.sampler_host, command.sampler_program);
}

}  // namespace pgwaitprof::commands
