// Scratch cluster set-up and tear-down.
#include "daemon/scratch_cluster.h"

#include <arpa/inet.h>
#include <fstream>
#include <netinet/in.h>
#include <stdexcept>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include "config/logging.h"

namespace pgwaitprof::daemon {
namespace {

auto log() {
  static auto logger = config::component_logger("scratch");
  return logger;
}

std::string last_line(const std::string& output) {
  std::string text = output;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  const auto newline = text.rfind('\n');
  return newline == std::string::npos ? text : text.substr(newline + 1);
}

}  // namespace

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
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

ScratchCluster::ScratchCluster(ScratchOptions options) : options_(std::move(options)) {
  namespace fs = std::filesystem;
  const std::string initdb = find_executable("initdb");
  if (initdb.empty()) {
    throw std::runtime_error(
        "could not find \"initdb\" on PATH or in /usr/lib/postgresql/*/bin (install postgresql-15)");
  }
  // Debian links some server programs into PATH: the real directory holds all of them.
  bin_dir_ = fs::canonical(initdb).parent_path();
  run_as_ = unprivileged_account();

  std::string pattern = (fs::temp_directory_path() / "pgwaitprof-scratch-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error(fmt::format("could not create temporary directory \"{}\"", pattern));
  }
  directory_ = pattern;
  if (run_as_ && ::chown(directory_.c_str(), run_as_->uid, run_as_->gid) != 0) {
    throw std::runtime_error(fmt::format("could not change owner of \"{}\"", directory_.string()));
  }
  port_ = free_port();
  log()->info("creating scratch cluster dir={} port={}{}", directory_.string(), port_,
              run_as_ ? " as=" + run_as_->name : "");
  auto result = run_command({initdb, "-D", (directory_ / "data").string(), "-U", "postgres", "-A",
                             "trust", "-E", "UTF8", "--locale=C", "--no-sync"},
                            run_as_);
  if (result.exit_code != 0) {
    destroy();
    throw std::runtime_error(fmt::format("initdb failed: {}", last_line(result.output)));
  }

  // pg_wait_sampling is preloaded when installed, so both sources can be compared on one run.
  const auto pkglibdir = bin_dir_.parent_path() / "lib";
  wait_sampling_ = fs::exists(pkglibdir / "pg_wait_sampling.so");
  {
    std::ofstream conf(directory_ / "data" / "postgresql.conf", std::ios::app);
    conf << "\n# pgwaitprof scratch cluster\n"
         << "listen_addresses = ''\n"
         << "unix_socket_directories = '" << directory_.string() << "'\n"
         << "port = " << port_ << "\n"
         << "max_connections = 300\n"
         << "shared_buffers = 256MB\n"
         << "fsync = on\n";
    if (wait_sampling_) conf << "shared_preload_libraries = 'pg_wait_sampling'\n";
    for (const auto& [name, value] : options_.settings) conf << name << " = '" << value << "'\n";
  }
  try {
    pg_ctl({"start", "-w", "-t", "60", "-l", (directory_ / "server.log").string()});
  } catch (...) {
    destroy();
    throw;
  }
  running_ = true;
}

ScratchCluster::~ScratchCluster() {
  try {
    destroy();
  } catch (const std::exception& error) {
    log()->error("could not remove scratch cluster dir={}: {}", directory_.string(), error.what());
  }
}

void ScratchCluster::pg_ctl(const std::vector<std::string>& arguments) {
  std::vector<std::string> argv{(bin_dir_ / "pg_ctl").string(), "-D", (directory_ / "data").string()};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  auto result = run_command(argv, run_as_);
  if (result.exit_code != 0) {
    std::string detail = last_line(result.output);
    std::ifstream server_log(directory_ / "server.log");
    for (std::string line; std::getline(server_log, line);) {
      if (line.find("FATAL") != std::string::npos) detail = line;
    }
    throw std::runtime_error(fmt::format("pg_ctl {} failed: {}", arguments.front(), detail));
  }
}

std::string ScratchCluster::conninfo() const {
  return fmt::format("host={} port={} user=postgres dbname=postgres", directory_.string(), port_);
}

void ScratchCluster::restart() {
  pg_ctl({"restart", "-w", "-t", "60", "-m", "fast", "-l", (directory_ / "server.log").string()});
}

void ScratchCluster::destroy() {
  if (directory_.empty()) return;
  if (options_.keep) {
    log()->info("keeping scratch cluster dir={} conninfo=\"{}\"", directory_.string(), conninfo());
    return;
  }
  if (running_) {
    running_ = false;
    pg_ctl({"stop", "-w", "-t", "60", "-m", "fast"});
  }
  std::filesystem::remove_all(directory_);
  directory_.clear();
}

}  // namespace pgwaitprof::daemon
