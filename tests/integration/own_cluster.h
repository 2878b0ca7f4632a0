// A scratch cluster of the test's own (deploy/scratch-cluster.sh in `where`/cluster, about a
// second to start), stopped and removed with this object: for a test that restarts or kills its
// server, or that measures every backend of it, which the shared cluster's other tests would
// disturb.
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/programs.h"
#include "daemon/engine/process.h"

namespace pgwaitprof::testing {

struct OwnCluster {
  std::filesystem::path dir;
  std::string host, port, data, conninfo;
  // `preload`: the server's shared_preload_libraries instead of the script's (SCRATCH_PRELOAD);
  // `isolation`: the server isolated as a container isolates one (SCRATCH_ISOLATION: "pid",
  // "chroot" or "root:PATH"), with the server of `bin` (default Debian's 15);
  // `max_connections` instead of the script's 200 when given (SCRATCH_MAX_CONNECTIONS).
  explicit OwnCluster(const std::filesystem::path& where,
                      const std::optional<std::string>& preload = std::nullopt,
                      const std::string& isolation = "", const std::string& bin = "",
                      int max_connections = 0)
      : dir(where / "cluster") {
    std::vector<std::string> argv{"bash", script(), "start", dir.string()};
    if (!bin.empty()) argv.push_back(bin);
    if (max_connections > 0) {
      argv.insert(argv.begin(),
                  {"env", "SCRATCH_MAX_CONNECTIONS=" + std::to_string(max_connections)});
    }
    if (preload) argv.insert(argv.begin(), {"env", "SCRATCH_PRELOAD=" + *preload});
    if (!isolation.empty()) argv.insert(argv.begin(), {"env", "SCRATCH_ISOLATION=" + isolation});
    auto started = engine::run_command(argv);
    if (started.exit_code != 0) throw std::runtime_error("scratch cluster: " + started.output);
    host = variable(started.output, "PGHOST");
    port = variable(started.output, "PGPORT");
    data = variable(started.output, "PGWAITPROF_TEST_PGDATA");
    conninfo = "host=" + host + " port=" + port + " user=postgres dbname=postgres";
  }
  // Turns autovacuum off (ALTER SYSTEM and a reload): no worker's transactions in a test that
  // counts the server's. Whether psql succeeded.
  bool autovacuum_off() const {
    return engine::run_command({base::find_executable("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1",
                                "-c", "ALTER SYSTEM SET autovacuum = off", "-c",
                                "SELECT pg_reload_conf()", conninfo})
               .exit_code == 0;
  }
  // Stops and removes it now (before the test removes the directory around it), once.
  void stop() {
    if (stopped_) return;
    stopped_ = true;
    engine::run_command({"bash", script(), "stop", dir.string()});
  }
  ~OwnCluster() { stop(); }
  OwnCluster(const OwnCluster&) = delete;
  OwnCluster& operator=(const OwnCluster&) = delete;

 private:
  bool stopped_ = false;
  static std::string script() {
    return std::string(PGWAITPROF_SOURCE_DIR) + "/deploy/scratch-cluster.sh";
  }
  // NAME's value in the `export NAME=VALUE ...` line the script prints.
  static std::string variable(const std::string& text, const std::string& name) {
    const auto at = text.find(name + "=");
    if (at == std::string::npos) return "";
    const auto start = at + name.size() + 1;
    return text.substr(start, text.find_first_of(" \n", start) - start);
  }
};

}  // namespace pgwaitprof::testing
