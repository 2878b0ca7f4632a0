// The BPF programs and links a process holds, and whether any of them outlived it: by id, so that
// other traced runs on the same machine (another test lane, another user) do not count.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/integration/harness.h"

namespace pgwaitprof::testing {

using namespace std::chrono_literals;

// The traced source's program names, as `bpftool prog show` lists them (dump_tasks: the task
// iterator read at each read of the maps).
inline const std::set<std::string>& traced_program_names() {
  static const std::set<std::string> names{"on_switch", "on_fork", "on_exec", "on_sample",
                                           "dump_tasks"};
  return names;
}

// Every program of the traced source's object, the loaded ones and on_wakeup, which loads only
// on a kernel whose run queue's clock the switch program cannot reach (or with
// PGWAITPROF_FAULT_FAIL=trace-runq-clock): none may stay loaded.
inline const std::set<std::string>& traced_object_program_names() {
  static const std::set<std::string> names = [] {
    auto all = traced_program_names();
    all.insert("on_wakeup");
    return all;
  }();
  return names;
}

// The ids of the BPF programs and links whose descriptors a process holds (its fdinfo's
// "prog_id:" of program and link descriptors, "link_id:" of links).
struct BpfObjects {
  std::set<uint32_t> programs;
  std::set<uint32_t> links;
  void merge(const BpfObjects& other) {
    programs.insert(other.programs.begin(), other.programs.end());
    links.insert(other.links.begin(), other.links.end());
  }
};

inline BpfObjects bpf_objects_of(pid_t pid) {
  BpfObjects objects;
  std::error_code error;
  const std::filesystem::path fdinfo = "/proc/" + std::to_string(pid) + "/fdinfo";
  for (const auto& entry : std::filesystem::directory_iterator(fdinfo, error)) {
    const std::string text = read_text(entry.path());
    const auto take = [&](const std::string& field, std::set<uint32_t>& into) {
      const auto at = text.find(field);
      if (at != std::string::npos) {
        into.insert(static_cast<uint32_t>(std::stoul(text.substr(at + field.size()))));
      }
    };
    take("\nprog_id:", objects.programs);
    take("\nlink_id:", objects.links);
  }
  return objects;
}

// `bpftool prog show -j` or `bpftool link show -j`: every object loaded now.
inline nlohmann::json bpftool_list(const std::string& what) {
  const auto shown = engine::run_command({base::find_executable("bpftool"), what, "show", "-j"});
  auto list = nlohmann::json::parse(shown.output, nullptr, false);
  return list.is_array() ? list : nlohmann::json::array();
}

// Whether any of `objects` is still loaded or attached, after up to `timeout` for the kernel to
// free them (it does after an RCU grace period).
inline bool any_left(const BpfObjects& objects, std::chrono::milliseconds timeout = 10s) {
  const auto listed = [&](const std::string& what, const std::set<uint32_t>& ids) {
    for (const auto& object : bpftool_list(what)) {
      if (ids.contains(object.value("id", 0u))) return true;
    }
    return false;
  };
  return !eventually(
      timeout, [&] { return !listed("prog", objects.programs) && !listed("link", objects.links); });
}

// The highest program id loaded now (0 for none): programs loaded later have higher ids.
inline uint32_t highest_program_id() {
  uint32_t highest = 0;
  for (const auto& program : bpftool_list("prog")) {
    highest = std::max(highest, program.value("id", 0u));
  }
  return highest;
}

// The BPF programs that live processes other than `gone` hold, by their own descriptor or
// through a link's: scanned from every process's fdinfo (Debian's bpftool lists no "pids").
inline std::set<uint32_t> programs_held_by_live_processes(pid_t gone) {
  std::set<uint32_t> held;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const auto name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto pid = static_cast<pid_t>(std::stol(name));
    if (pid == gone) continue;
    held.merge(bpf_objects_of(pid).programs);
  }
  return held;
}

// The traced source's programs loaded after `after_id` that no live process other than `gone`
// holds, after up to 10 s for the kernel to free those of an ended run: what it left behind.
// Programs of other traced runs (another test lane) are held by their process, and not counted.
inline std::vector<std::string> programs_left_after(uint32_t after_id, pid_t gone) {
  std::vector<std::string> left;
  eventually(10s, [&] {
    left.clear();
    const auto held = programs_held_by_live_processes(gone);
    for (const auto& program : bpftool_list("prog")) {
      const auto id = program.value("id", 0u);
      if (id > after_id && traced_object_program_names().contains(program.value("name", "")) &&
          !held.contains(id)) {
        left.push_back(program.dump());
      }
    }
    return left.empty();
  });
  return left;
}

}  // namespace pgwaitprof::testing
