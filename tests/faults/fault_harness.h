// Helpers of the fault tests (issue 8): a daemon with a configurable configuration, raw clients
// of its control socket with timeouts, and /proc scans for processes left behind. Built on the
// integration harness (the scratch cluster of deploy/test.sh, the pgwaitprof binary).
#pragma once

#include <arpa/inet.h>
#include <crypt.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <nlohmann/json.hpp>

#include "tests/integration/harness.h"

namespace pgwaitprof::testing {

using namespace std::chrono_literals;

// A daemon sampling the test cluster as target "local"; `extra` is appended to its
// configuration (web:, control:, ...); its data directory is `data_dir` or one of its own.
struct FaultDaemon {
  std::filesystem::path dir;
  std::filesystem::path data;
  int port = 0;
  std::unique_ptr<ChildProcess> process;

  explicit FaultDaemon(const std::string& name, const std::string& extra = "",
                       const std::string& dsn = test_conninfo(), int hz = 100,
                       const std::filesystem::path& data_dir = {}) {
    dir = temp_dir(name);
    data = data_dir.empty() ? dir / "data" : data_dir;
    port = engine::free_port();
    write_text(dir / "pgwaitprof.yaml", "listen: 127.0.0.1:" + std::to_string(port) +
                                            "\ndata_dir: " + data.string() +
                                            "\ntargets:\n  - name: local\n    dsn: \"" + dsn +
                                            "\"\n    hz: " + std::to_string(hz) + "\n" + extra);
    process =
        std::make_unique<ChildProcess>(std::vector<std::string>{pgwaitprof_binary(), "daemon", "-c",
                                                                (dir / "pgwaitprof.yaml").string()},
                                       dir / "daemon.log");
  }
  std::filesystem::path socket() const { return data / "pgwaitprof.sock"; }
  std::optional<double> value(const std::string& series) const {
    return metric(scrape(port), series);
  }
  bool up() const {
    return eventually(15s, [&] { return value("pgwaitprof_up{target=\"local\"}") == 1.0; });
  }
  double snapshots() const {
    return value("pgwaitprof_snapshots_total{target=\"local\"}").value_or(-1);
  }
};

// A blocking unix socket client; -1 when the connection failed.
inline int connect_unix(const std::filesystem::path& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

inline bool send_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const auto sent = ::send(fd, text.data(), text.size(), MSG_NOSIGNAL);
    if (sent <= 0) return false;
    text.remove_prefix(static_cast<size_t>(sent));
  }
  return true;
}

// Everything the peer sends until it closes, or until `timeout` passes.
inline std::string read_to_eof(int fd, std::chrono::milliseconds timeout = 30s) {
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buffer[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd wanted{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&wanted, 1, static_cast<int>(left.count())) <= 0) break;
    const auto got = ::recv(fd, buffer, sizeof buffer, 0);
    if (got <= 0) break;
    text.append(buffer, static_cast<size_t>(got));
  }
  return text;
}

// A blocking TCP connection to 127.0.0.1:port, from `from` (another loopback address, such as
// 127.0.0.2, stands for another host); -1 when it failed.
inline int connect_loopback(int port, const char* from = nullptr) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (from != nullptr) {
    sockaddr_in source{};
    source.sin_family = AF_INET;
    ::inet_pton(AF_INET, from, &source.sin_addr);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&source), sizeof source) != 0) {
      ::close(fd);
      return -1;
    }
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

inline std::string base64(std::string_view text) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string encoded;
  for (size_t at = 0; at < text.size(); at += 3) {
    uint32_t group = static_cast<unsigned char>(text[at]) << 16;
    if (at + 1 < text.size()) group |= static_cast<unsigned char>(text[at + 1]) << 8;
    if (at + 2 < text.size()) group |= static_cast<unsigned char>(text[at + 2]);
    encoded += kAlphabet[(group >> 18) & 63];
    encoded += kAlphabet[(group >> 12) & 63];
    encoded += at + 1 < text.size() ? kAlphabet[(group >> 6) & 63] : '=';
    encoded += at + 2 < text.size() ? kAlphabet[group & 63] : '=';
  }
  return encoded;
}

// GET /metrics on 127.0.0.1:port, with basic auth when `user_password` ("user:password") is
// given: the whole answer (status line, headers, body), or "" when nothing answered in
// `timeout`.
inline std::string get_metrics(int port, const std::string& user_password = "",
                               std::chrono::milliseconds timeout = 10s,
                               const char* from = nullptr) {
  const int fd = connect_loopback(port, from);
  if (fd < 0) return "";
  std::string request = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n";
  if (!user_password.empty()) request += "Authorization: Basic " + base64(user_password) + "\r\n";
  send_all(fd, request + "\r\n");
  std::string response = read_to_eof(fd, timeout);
  ::close(fd);
  return response;
}

// A bcrypt hash of `password` as htpasswd -B makes one; `cost` sets its time (2^cost rounds).
inline std::string bcrypt_hash(const std::string& password, int cost = 5) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  crypt_gensalt_rn("$2b$", static_cast<unsigned long>(cost), nullptr, 0, salt, sizeof salt);
  crypt_data data{};
  return crypt_r(password.c_str(), salt, &data);
}

// The web: section of a daemon's configuration with these basic-auth users (name -> hash).
inline std::string basic_auth_config(const std::map<std::string, std::string>& users) {
  std::string section = "web:\n  basic_auth_users:\n";
  for (const auto& [user, hash] : users) section += "    " + user + ": \"" + hash + "\"\n";
  return section;
}

// One request on a fresh connection, and the first event line of the answer (parsed).
inline nlohmann::json ask(const std::filesystem::path& socket, const std::string& request) {
  const int fd = connect_unix(socket);
  if (fd < 0) return nullptr;
  send_all(fd, request);
  const std::string reply = read_to_eof(fd, 15s);
  ::close(fd);
  const auto line = reply.substr(0, reply.find('\n'));
  return nlohmann::json::parse(line, nullptr, false);
}

// The scratch directory a foreground run announced in its log ("" before).
inline std::string scratch_directory(const std::string& log) {
  const std::string marker = "creating scratch cluster dir=";
  const auto at = log.find(marker);
  if (at == std::string::npos) return "";
  const auto start = at + marker.size();
  return log.substr(start, log.find(' ', start) - start);
}

// Pids of live processes whose command line contains `needle` (not zombies).
inline std::vector<pid_t> processes_with(const std::string& needle) {
  std::vector<pid_t> found;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = read_text(entry.path() / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    const std::string stat = read_text(entry.path() / "stat");
    const auto state = stat.find(") ");
    if (state != std::string::npos && stat[state + 2] == 'Z') continue;
    if (cmdline.find(needle) != std::string::npos) found.push_back(std::stoi(name));
  }
  return found;
}

inline std::string cmdline_of(pid_t pid) {
  std::string text = read_text("/proc/" + std::to_string(pid) + "/cmdline");
  std::replace(text.begin(), text.end(), '\0', ' ');
  return text;
}

// Whether the process runs the program `name` (its argv[0]'s file name).
inline bool runs_program(pid_t pid, const std::string& name) {
  const std::string text = read_text("/proc/" + std::to_string(pid) + "/cmdline");
  return std::filesystem::path(text.substr(0, text.find('\0'))).filename() == name;
}

// Every regular file under `dir`, recursively.
inline std::vector<std::filesystem::path> files_under(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, error);
       it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    if (it->is_regular_file()) files.push_back(it->path());
  }
  return files;
}

inline unsigned permissions_of(const std::filesystem::path& path) {
  struct stat info {};
  ::stat(path.c_str(), &info);
  return info.st_mode & 07777;
}

// pgwaitprof with the PG* variables removed, so that `run` without a target makes a scratch
// cluster.
inline std::vector<std::string> without_pg_environment(std::vector<std::string> argv) {
  std::vector<std::string> wrapped{"/usr/bin/env", "-u",     "PGHOST", "-u",        "PGPORT",
                                   "-u",           "PGUSER", "-u",     "PGDATABASE"};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return wrapped;
}

}  // namespace pgwaitprof::testing
