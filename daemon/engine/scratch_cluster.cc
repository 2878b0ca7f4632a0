// Scratch cluster set-up and tear-down.
#include "daemon/engine/scratch_cluster.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>

#include "base/logging.h"
#include "base/programs.h"
#include "daemon/engine/supervisor.h"

namespace pgwaitprof::engine {
namespace {

auto scratch_cluster_log() {
  static auto logger = base::component_logger("scratch");
  return logger;
}

std::string last_line(const std::string& output) {
  std::string text = output;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  const auto newline = text.rfind('\n');
  return newline == std::string::npos ? text : text.substr(newline + 1);
}

// The first directory on the way to `dir` that `account` may not enter (no search permission for
// it as owner, group or other), or nothing: a server under /root is refused with that name
// rather than with initdb's "permission denied".
std::optional<std::filesystem::path> unreachable_for(const std::filesystem::path& dir,
                                                     const RunAs& account) {
  std::filesystem::path walked;
  for (const auto& part : dir) {
    walked /= part;
    struct stat status {};
    if (::stat(walked.c_str(), &status) != 0) continue;
    const bool allowed = status.st_uid == account.uid   ? (status.st_mode & S_IXUSR) != 0
                         : status.st_gid == account.gid ? (status.st_mode & S_IXGRP) != 0
                                                        : (status.st_mode & S_IXOTH) != 0;
    if (!allowed) return walked;
  }
  return std::nullopt;
}

}  // namespace

std::string client_program(const std::filesystem::path& server_bin, const std::string& name) {
  const auto beside = server_bin / name;
  if (::access(beside.c_str(), X_OK) == 0) return beside.string();
  return base::find_executable(name);
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  ::close(fd);
  if (port == 0) throw std::runtime_error("could not find a free port");
  return port;
}

asio::awaitable<base::Expected<std::unique_ptr<ScratchCluster>>> ScratchCluster::create(
    ScratchOptions options, base::RunControl& control) {
  std::unique_ptr<ScratchCluster> cluster(new ScratchCluster(std::move(options)));
  base::Status failed;
  try {
    failed = co_await cluster->initialise(control);
  } catch (const std::exception& error) {  // no unprivileged account, no free port
    failed = base::Error{error.what()};
  }
  if (!failed && control.interrupted()) failed = base::Error{control.reason()};
  if (failed) {
    // Whatever was started goes, also when the user asked to keep the cluster.
    cluster->options_.keep = false;
    co_await cluster->destroy();
    co_return *failed;
  }
  co_return std::move(cluster);
}

base::Expected<std::string> ScratchCluster::locate_programs() {
  namespace fs = std::filesystem;
  std::string initdb;
  if (!options_.server_bin.empty()) {
    for (const char* program : {"initdb", "pg_ctl", "postgres"}) {
      if (::access((options_.server_bin / program).c_str(), X_OK) != 0) {
        return base::Error{fmt::format("could not find \"{}\" in server directory \"{}\"", program,
                                       options_.server_bin.string())};
      }
    }
    initdb = (options_.server_bin / "initdb").string();
  } else {
    initdb = base::find_executable("initdb");
  }
  if (initdb.empty()) {
    return base::Error{
        "could not find \"initdb\" on PATH or in /usr/lib/postgresql/*/bin (install "
        "postgresql-15)"};
  }
  // Debian links some server programs into PATH: the real directory holds all of them.
  bin_dir_ = fs::canonical(initdb).parent_path();
  run_as_ = unprivileged_account();
  if (run_as_) {
    if (auto unreachable = unreachable_for(bin_dir_, *run_as_)) {
      return base::Error{
          fmt::format("could not use server directory \"{}\": user \"{}\" cannot enter \"{}\"",
                      bin_dir_.string(), run_as_->name, unreachable->string())};
    }
  }
  return initdb;
}

base::Status ScratchCluster::make_directory() {
  // What a killed pgwaitprof (and its watchdog) left goes before anything new is made.
  sweep_abandoned_scratch_directories();
  std::string pattern =
      (std::filesystem::temp_directory_path() / (std::string(kScratchPrefix) + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return base::Error{fmt::format("could not create temporary directory \"{}\"", pattern)};
  }
  directory_ = pattern;
  // From here on the directory and every server in it go with pgwaitprof, however it ends.
  supervise_scratch_directory(directory_);
  write_scratch_owner(directory_);
  if (run_as_ && ::chown(directory_.c_str(), run_as_->uid, run_as_->gid) != 0) {
    return base::Error{fmt::format("could not change owner of \"{}\"", directory_.string())};
  }
  return std::nullopt;
}

asio::awaitable<base::Status> ScratchCluster::initialise(base::RunControl& control) {
  const auto initdb = locate_programs();
  if (!initdb) co_return initdb.error();
  if (auto failed = make_directory()) co_return failed;
  port_ = free_port();
  scratch_cluster_log()->info("creating scratch cluster dir={} port={}{}", directory_.string(),
                              port_, run_as_ ? " as=" + run_as_->name : "");
  // initdb may be interrupted: it removes what it wrote, we remove the rest.
  const std::vector<std::string> argv{*initdb,      "-D",       (directory_ / "data").string(),
                                      "-U",         "postgres", "-A",
                                      "trust",      "-E",       "UTF8",
                                      "--locale=C", "--no-sync"};
  const SpawnOptions options{run_as_, {}};
  auto result =
      co_await run_command_async(argv, options, [&](pid_t pid) { control.set_child(pid); });
  control.clear_child();
  if (!result) co_return result.error();
  if (control.interrupted()) co_return base::Error{control.reason()};
  if (result->exit_code != 0) {
    co_return base::Error{fmt::format("initdb failed: {}", last_line(result->output))};
  }
  std::ifstream version_file(directory_ / "data" / "PG_VERSION");
  version_file >> major_;
  write_configuration();
  // pg_ctl start is not interrupted: a postmaster it already forked could outlive it. It takes
  // a second; an interrupt meanwhile is seen right after, and the server is stopped again.
  const std::vector<std::string> start{"start", "-w", "-t",
                                       "60",    "-l", (directory_ / "server.log").string()};
  co_return co_await pg_ctl(start);
}

void ScratchCluster::write_configuration() {
  // pg_wait_sampling is preloaded when installed, so both sources can be compared on one run.
  const auto lib = bin_dir_.parent_path() / "lib";
  wait_sampling_ = std::filesystem::exists(lib / "pg_wait_sampling.so") ||
                   std::filesystem::exists(lib / "postgresql" / "pg_wait_sampling.so");
  std::ofstream conf(directory_ / "data" / "postgresql.conf", std::ios::app);
  conf << "\n# pgwaitprof scratch cluster\n"
       << "listen_addresses = ''\n"
       << "unix_socket_directories = '" << directory_.string() << "'\n"
       << "port = " << port_ << "\n"
       << "max_connections = 300\n"
       << "shared_buffers = 256MB\n"
       << "fsync = on\n";
  // Statements for the report's top SQL: query ids in pg_stat_activity (14+; 13 has neither
  // them nor the setting), and pg_stat_statements' calls and times (contrib, always installed
  // with the server).
  if (major_ == 0 || major_ >= 14) conf << "compute_query_id = on\n";
  conf << "shared_preload_libraries = '" << (wait_sampling_ ? "pg_wait_sampling," : "")
       << "pg_stat_statements'\n";
  for (const auto& [name, value] : options_.settings) conf << name << " = '" << value << "'\n";
}

ScratchCluster::~ScratchCluster() {
  if (directory_.empty() || options_.keep) return;
  // The I/O loop is gone: stop the server the blocking way.
  if (std::filesystem::exists(directory_ / "data" / "postmaster.pid")) {
    run_command(pg_ctl_argv({"stop", "-w", "-t", "60", "-m", "fast"}), {run_as_, {}});
  }
  remove_directory();
}

std::vector<std::string> ScratchCluster::pg_ctl_argv(
    const std::vector<std::string>& arguments) const {
  std::vector<std::string> argv{(bin_dir_ / "pg_ctl").string(), "-D",
                                (directory_ / "data").string()};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  return argv;
}

asio::awaitable<base::Status> ScratchCluster::pg_ctl(const std::vector<std::string>& arguments) {
  const SpawnOptions options{run_as_, {}};
  auto result = co_await run_command_async(pg_ctl_argv(arguments), options);
  if (!result) co_return result.error();
  if (result->exit_code == 0) co_return std::nullopt;
  std::string detail = last_line(result->output);
  std::ifstream server_log(directory_ / "server.log");
  for (std::string line; std::getline(server_log, line);) {
    if (line.find("FATAL") != std::string::npos) detail = line;
  }
  co_return base::Error{fmt::format("pg_ctl {} failed: {}", arguments.front(), detail)};
}

std::string ScratchCluster::conninfo() const {
  return fmt::format("host={} port={} user=postgres dbname=postgres", directory_.string(), port_);
}

asio::awaitable<base::Status> ScratchCluster::restart() {
  const std::vector<std::string> restart{
      "restart", "-w", "-t", "60", "-m", "fast", "-l", (directory_ / "server.log").string()};
  co_return co_await pg_ctl(restart);
}

asio::awaitable<void> ScratchCluster::destroy() {
  if (directory_.empty()) co_return;
  if (options_.keep) {
    scratch_cluster_log()->info("keeping scratch cluster dir={} conninfo=\"{}\"",
                                directory_.string(), conninfo());
    release_scratch_directory(directory_);
    std::error_code ignored;
    std::filesystem::remove(directory_ / "owner", ignored);
    co_return;
  }
  if (std::filesystem::exists(directory_ / "data" / "postmaster.pid")) {
    const std::vector<std::string> stop{"stop", "-w", "-t", "60", "-m", "fast"};
    if (auto failed = co_await pg_ctl(stop)) {
      scratch_cluster_log()->error("could not stop scratch cluster dir={}: {}", directory_.string(),
                                   failed->message);
    }
  }
  remove_directory();
}

// Whatever pg_ctl left of the server (every process naming the directory) is ended as the
// watchdog ends it, before the directory goes: a postmaster whose data directory was removed
// under it would stay for good (seen once, after a run whose stdout was closed, under the
// sanitizers beside two other test lanes). Finds nothing after a clean stop; blocks for at most a
// few seconds otherwise.
void ScratchCluster::stop_left_processes() {
  if (const int signalled = stop_processes_naming(directory_, std::chrono::seconds(5))) {
    scratch_cluster_log()->warn("ended {} processes of scratch cluster dir={} that pg_ctl left",
                                signalled, directory_.string());
  }
}

void ScratchCluster::remove_directory() {
  stop_left_processes();
  std::error_code error;
  std::filesystem::remove_all(directory_, error);
  if (error) {
    scratch_cluster_log()->error("could not remove scratch cluster dir={}: {}", directory_.string(),
                                 error.message());
  }
  release_scratch_directory(directory_);
  directory_.clear();
}

}  // namespace pgwaitprof::engine
