// Target resolution of the foreground commands.
#include "daemon/commands/foreground.h"

#include <fmt/format.h>

#include <cstdlib>

#include "collectors/pg_session.h"
#include "daemon/engine/fault_point.h"
#include "daemon/engine/process.h"

namespace pgwaitprof::commands {

bool pg_environment_set() {
  for (const char* name : {"PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER", "PGSERVICE"}) {
    if (const char* value = std::getenv(name); value && *value) return true;
  }
  return false;
}

std::filesystem::path default_data_dir() {
  if (const char* dir = std::getenv("PGWAITPROF_DATA_DIR"); dir && *dir) return dir;
  if (const char* dir = std::getenv("XDG_DATA_HOME"); dir && *dir) {
    return std::filesystem::path(dir) / "pgwaitprof";
  }
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home ? home : ".") / ".local" / "share" / "pgwaitprof";
}

namespace {

// pgbench -i (and the extension) in a new scratch cluster.
asio::awaitable<base::Status> initialise_scratch(engine::ScratchCluster& scratch,
                                                 const LocalTargetOptions& options,
                                                 base::RunControl& control) {
  const auto& bin = scratch.bin_dir();
  std::cerr << fmt::format("pgwaitprof: initialising pgbench data at scale {}\n", options.scale);
  const std::vector<std::string> init{engine::client_program(bin, "pgbench"),
                                      "-i",
                                      "-q",
                                      "-s",
                                      std::to_string(options.scale),
                                      scratch.conninfo()};
  auto initialised =
      co_await engine::run_command_async(init, {}, [&](pid_t pid) { control.set_child(pid); });
  control.clear_child();
  if (!initialised) co_return initialised.error();
  if (control.interrupted()) co_return base::Error{control.reason()};
  if (initialised->exit_code != 0) {
    co_return base::Error{"pgbench -i failed on the scratch cluster: " + initialised->output};
  }
  const std::vector<std::string> statements{engine::client_program(bin, "psql"),
                                            "-X",
                                            "-q",
                                            "-c",
                                            "CREATE EXTENSION IF NOT EXISTS pg_stat_statements",
                                            scratch.conninfo()};
  auto statements_created = co_await engine::run_command_async(statements);
  if (!statements_created || statements_created->exit_code != 0) {
    co_return base::Error{
        "could not create extension \"pg_stat_statements\": " +
        (statements_created ? statements_created->output : statements_created.error().message)};
  }
  if (options.create_wait_sampling && scratch.wait_sampling_preloaded()) {
    const std::vector<std::string> create{engine::client_program(bin, "psql"),
                                          "-X",
                                          "-q",
                                          "-c",
                                          "CREATE EXTENSION IF NOT EXISTS pg_wait_sampling",
                                          scratch.conninfo()};
    auto created = co_await engine::run_command_async(create);
    if (!created || created->exit_code != 0) {
      co_return base::Error{"could not create extension \"pg_wait_sampling\": " +
                            (created ? created->output : created.error().message)};
    }
  }
  co_return std::nullopt;
}

}  // namespace

asio::awaitable<base::Expected<LocalTarget>> open_local_target(const LocalTargetOptions& options,
                                                               base::RunControl& control) {
  LocalTarget local;
  if (options.target && !options.server_bin.empty()) {
    co_return base::Error{"--server-bin makes a scratch cluster: it cannot be used with a target"};
  }
  if (options.target) {
    local.conninfo = *options.target;
    co_return local;
  }
  // A build to run is asked for: its own cluster, whatever PG* variables are set.
  if (options.server_bin.empty() && pg_environment_set()) co_return local;
  engine::ScratchOptions scratch_options;
  scratch_options.keep = options.keep_cluster;
  scratch_options.server_bin = options.server_bin;
  auto scratch = co_await engine::ScratchCluster::create(scratch_options, control);
  if (!scratch) co_return scratch.error();
  local.scratch = std::move(*scratch);
  local.conninfo = local.scratch->conninfo();
  co_await engine::fault_point("scratch-started", control);
  if (auto failed = co_await initialise_scratch(*local.scratch, options, control)) {
    local.scratch->set_keep(false);
    co_await local.scratch->destroy();
    co_return *failed;
  }
  co_return local;
}

}  // namespace pgwaitprof::commands
