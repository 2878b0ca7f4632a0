// Target resolution of the foreground commands.
#include "daemon/local_target.h"

#include <fmt/format.h>

#include "daemon/foreground_run.h"
#include "daemon/process.h"

namespace pgwaitprof::daemon {

LocalTarget open_local_target(const std::optional<std::string>& target, int scale, bool keep_cluster,
                              bool create_wait_sampling) {
  LocalTarget local;
  if (target) {
    local.conninfo = *target;
    return local;
  }
  if (pg_environment_set()) return local;
  local.scratch = std::make_unique<ScratchCluster>(ScratchOptions{keep_cluster, {}});
  local.conninfo = local.scratch->conninfo();
  const auto& bin = local.scratch->bin_dir();
  std::cerr << fmt::format("pgwaitprof: initialising pgbench data at scale {}\n", scale);
  auto initialised = run_command({(bin / "pgbench").string(), "-i", "-q", "-s", std::to_string(scale), local.conninfo});
  if (initialised.exit_code != 0) {
    throw std::runtime_error("pgbench -i failed on the scratch cluster: " + initialised.output);
  }
  if (create_wait_sampling && local.scratch->wait_sampling_preloaded()) {
    auto created = run_command({(bin / "psql").string(), "-X", "-q", "-c",
                                "CREATE EXTENSION IF NOT EXISTS pg_wait_sampling", local.conninfo});
    if (created.exit_code != 0) {
      throw std::runtime_error("could not create extension \"pg_wait_sampling\": " + created.output);
    }
  }
  return local;
}

}  // namespace pgwaitprof::daemon
