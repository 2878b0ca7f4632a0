// /proc readers for the host's CPU and description.
#include "collectors/host.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/build_info.h"

namespace pgwaitprof::collectors {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\n')) {
    text.remove_suffix(1);
  }
  return text;
}

}  // namespace

std::optional<CpuTimes> parse_proc_stat(std::string_view text) {
  if (!text.starts_with("cpu ")) return std::nullopt;
  text.remove_prefix(4);
  uint64_t fields[8] = {};
  for (auto& field : fields) {
    text = trim(text);
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), field);
    if (error != std::errc()) return std::nullopt;
    text.remove_prefix(static_cast<size_t>(end - text.data()));
  }
  return CpuTimes{fields[0], fields[1], fields[2], fields[3],
                  fields[4], fields[5], fields[6], fields[7]};
}

std::optional<uint64_t> parse_process_cpu_ticks(std::string_view text) {
  // The command name (field 2) is in parentheses and may contain spaces: count from its end.
  const auto close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  text.remove_prefix(close + 1);
  // After ")": state(3) ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
  // utime(14) stime(15).
  uint64_t utime = 0;
  uint64_t stime = 0;
  for (int field = 3; field <= 15; ++field) {
    text = trim(text);
    const auto end = text.find(' ');
    const auto value = text.substr(0, end);
    if (field == 14 || field == 15) {
      uint64_t parsed = 0;
      if (std::from_chars(value.data(), value.data() + value.size(), parsed).ec != std::errc()) {
        return std::nullopt;
      }
      (field == 14 ? utime : stime) = parsed;
    }
    if (end == std::string_view::npos)
      return field == 15 ? std::optional(utime + stime) : std::nullopt;
    text.remove_prefix(end);
  }
  return utime + stime;
}

model::HostCpu cpu_between(const CpuTimes& before, const CpuTimes& after, uint64_t loadgen_ticks,
                           base::Seconds interval, long ticks_per_second) {
  const double interval_s = interval.count();
  model::HostCpu cpu;
  const double total = static_cast<double>(after.total() - before.total());
  if (total > 0) {
    auto pct = [&](uint64_t CpuTimes::*field) {
      return 100.0 * static_cast<double>(after.*field - before.*field) / total;
    };
    cpu.user_pct = pct(&CpuTimes::user) + pct(&CpuTimes::nice);
    cpu.system_pct = pct(&CpuTimes::system) + pct(&CpuTimes::irq) + pct(&CpuTimes::softirq);
    cpu.iowait_pct = pct(&CpuTimes::iowait);
    cpu.idle_pct = pct(&CpuTimes::idle);
  }
  if (interval_s > 0 && ticks_per_second > 0) {
    cpu.loadgen_cores =
        static_cast<double>(loadgen_ticks) / static_cast<double>(ticks_per_second) / interval_s;
  }
  return cpu;
}

std::optional<CpuTimes> read_proc_stat() { return parse_proc_stat(read_file("/proc/stat")); }

std::optional<uint64_t> read_process_cpu_ticks(pid_t pid) {
  return parse_process_cpu_ticks(read_file("/proc/" + std::to_string(pid) + "/stat"));
}

std::string parse_cpu_model(std::string_view cpuinfo) {
  for (const auto* label : {"model name", "Model", "cpu model"}) {
    const auto at = cpuinfo.find(label);
    if (at == std::string_view::npos) continue;
    auto line = cpuinfo.substr(at);
    line = line.substr(0, line.find('\n'));
    const auto colon = line.find(':');
    if (colon != std::string_view::npos) return std::string(trim(line.substr(colon + 1)));
  }
  return "";
}

uint64_t parse_mem_total_bytes(std::string_view meminfo) {
  const auto at = meminfo.find("MemTotal:");
  if (at == std::string_view::npos) return 0;
  auto value = trim(meminfo.substr(at + 9, meminfo.find('\n', at) - at - 9));
  uint64_t kilobytes = 0;
  std::from_chars(value.data(), value.data() + value.size(), kilobytes);
  return kilobytes * 1024;
}

void describe_host(model::Environment& environment) {
  utsname name{};
  if (uname(&name) == 0) {
    environment.kernel = std::string(name.sysname) + " " + name.release + " " + name.machine;
    environment.hostname = name.nodename;
  }
  environment.cpu_model = parse_cpu_model(read_file("/proc/cpuinfo"));
  environment.cpu_count = static_cast<int>(std::thread::hardware_concurrency());
  environment.memory_bytes = parse_mem_total_bytes(read_file("/proc/meminfo"));
  // The program that ran here, so that the history can say when it changed.
  environment.pgwaitprof_version = std::string(base::kVersion) + " (" + base::kRevision + ")";
}

}  // namespace pgwaitprof::collectors
