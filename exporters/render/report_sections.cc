// Kernel view, lock waits and statements sections.
#include "exporters/render/report_sections.h"

#include <fmt/format.h>

#include <algorithm>

#include "exporters/render/report_common.h"
#include "exporters/render/text_format.h"

namespace pgwaitprof::exporters::report_detail {
namespace {

double ratio(double part, double whole) { return whole > 0 ? part / whole : 0; }

std::string top_waits(const model::StatementProfile& statement, size_t shown) {
  std::vector<std::pair<uint64_t, std::string>> ranked;
  for (const auto& [name, count] : statement.waits) ranked.emplace_back(count, name);
  std::sort(ranked.rbegin(), ranked.rend());
  std::string text;
  for (size_t index = 0; index < std::min(shown, ranked.size()); ++index) {
    if (!text.empty()) text += ", ";
    text += fmt::format("{} {:.0f}%", ranked[index].second,
                        100 * ratio(static_cast<double>(ranked[index].first),
                                    static_cast<double>(statement.samples)));
  }
  return text;
}

std::vector<std::pair<std::string, double>> class_shares(const model::StatementProfile& statement) {
  std::map<std::string, uint64_t> classes;
  for (const auto& [name, count] : statement.waits) {
    classes[name == model::kCpu ? std::string(model::kCpu) : name.substr(0, name.find(" | "))] +=
        count;
  }
  std::vector<std::pair<std::string, double>> shares;
  for (const auto& [wait_class, count] : classes) {
    shares.emplace_back(wait_class,
                        ratio(static_cast<double>(count), static_cast<double>(statement.samples)));
  }
  std::sort(shares.begin(), shares.end(), [](const auto& a, const auto& b) {
    return text_format::wait_class_before(a.first, b.first);
  });
  return shares;
}

}  // namespace

std::array<CpuSubRow, 2> cpu_sub_rows(const model::CpuSplit& split) {
  return {{{"kernel: on a CPU",
            "the server processes' time on a CPU over the same window, measured by the kernel "
            "(/proc/<pid>/schedstat), beside the sampled CPU row",
            split.on_cpu_share, split.on_cpu_aas},
           {"kernel: waiting for a CPU",
            "their time runnable but queued for a core, in any wait (a woken backend keeps its "
            "wait event until it gets a core)",
            split.runqueue_share, split.runqueue_aas}}};
}

namespace {

std::vector<std::string> function_row(const model::CpuFunctionShare& function) {
  return {fmt::format("{:.1f}%", 100 * function.share), fmt::format("{:.2f}", function.aas),
          function.name, function.kernel ? "kernel" : "user"};
}

// "base_yyparse 21%, hash_search_with_hash_value 9%"
std::string function_list(const std::vector<model::CpuFunctionShare>& functions) {
  std::string text;
  for (const auto& function : functions) {
    if (!text.empty()) text += ", ";
    text += fmt::format("{}{} {:.0f}%", function.name, function.kernel ? " [kernel]" : "",
                        100 * function.share);
  }
  return text;
}

SectionTable cpu_table(const model::CpuGroupFigures& group, const std::string& title) {
  SectionTable table;
  table.title = title;
  table.header = {"share", "AAS", "function (self)", "where"};
  table.right_aligned = {true, true, false, false};
  for (const auto& function : group.top) table.rows.push_back(function_row(function));
  return table;
}

}  // namespace

std::vector<SectionTable> cpu_sections(const model::Run& run, const model::Summary& summary) {
  std::vector<SectionTable> sections;
  if (!summary.cpu) return sections;
  const auto& cpu = *summary.cpu;
  SectionTable clients = cpu_table(cpu.clients, "where the CPU went: client backends");
  clients.anchor = kCpuAnchor;
  clients.notes.push_back(fmt::format(
      "{} on-CPU samples of client backends ({} Hz on each of {} CPUs, perf_event_open's "
      "software clock): {:.2f} sessions on a CPU on average, {:.0f}% of it in the kernel. A "
      "function's share is of those samples, counted where the CPU was running (self time); "
      "AAS is the sessions on a CPU it stands for.",
      cpu.clients.samples, cpu.hz, cpu.cpus, cpu.clients.aas, 100 * cpu.clients.kernel_share));
  if (cpu.lost > 0) {
    clients.notes.push_back(fmt::format(
        "The kernel dropped {} samples (its buffers were full): the figures are of the rest.",
        cpu.lost));
  }
  for (const auto& stall : cpu.stalls) {
    clients.notes.push_back(fmt::format(
        "In the stall at {}: CPU was {:.0f}% of the samples against {:.0f}% over the run; the "
        "client backends ran {}.",
        format_seconds(run.stalls[stall.stall].start.count()) + " s", 100 * stall.cpu_share,
        100 * stall.run_share, function_list(stall.top)));
  }
  if (cpu.clients.top.empty()) clients.header.clear();
  sections.push_back(std::move(clients));
  if (const auto& background = cpu.background) {
    SectionTable busiest = cpu_table(*background, "where the CPU went: " + background->group +
                                                      " (busiest background "
                                                      "process)");
    busiest.notes.push_back(fmt::format("{} samples: {:.2f} sessions on a CPU on average.",
                                        background->samples, background->aas));
    sections.push_back(std::move(busiest));
  }
  return sections;
}

std::string cpu_row_note(const model::Summary& summary) {
  if (!summary.cpu) return "";
  return "What the CPU row's backends were running is under \"where the CPU went\" below (and "
         "in cpu.folded).";
}

std::optional<SectionTable> kernel_section(const model::Summary& summary) {
  if (summary.kernel.empty()) return std::nullopt;
  SectionTable table;
  table.title = "kernel view (from /proc/<pid>/schedstat: exact times, not samples)";
  table.header = {"processes", "on a CPU (AAS)", "waiting for a CPU (AAS)"};
  table.right_aligned = {false, true, true};
  for (const char* group :
       {model::kClientBackends, model::kExitedProcesses, model::kBackgroundProcesses,
        model::kLoadGenerator, model::kSamplerBackend}) {
    const auto found = summary.kernel.find(group);
    if (found == summary.kernel.end()) continue;
    table.rows.push_back({group, fmt::format("{:.2f}", found->second.on_cpu),
                          fmt::format("{:.2f}", found->second.runqueue)});
  }
  const auto clients = summary.kernel.find(model::kClientBackends);
  const double on_cpu = clients == summary.kernel.end() ? 0 : clients->second.on_cpu;
  const double queued = clients == summary.kernel.end() ? 0 : clients->second.runqueue;
  if (on_cpu + queued > 0) {
    table.notes.push_back(fmt::format(
        "Of the time client backends were runnable, {:.0f}% was on a CPU and {:.0f}% waiting for "
        "one; the profile's CPU row shows the server processes' figures beside the sampled ones. "
        "Run-queue time also hides inside other waits (a woken backend keeps its wait event "
        "until it gets a core): {:.2f} AAS of client backends waited for a CPU in all.",
        100 * on_cpu / (on_cpu + queued), 100 * queued / (on_cpu + queued), queued));
  }
  return table;
}

constexpr size_t kTopLockRows = 10;

std::optional<SectionTable> lock_section(const model::Run& run, const model::Summary& summary) {
  if (run.lock_blockers.empty()) return std::nullopt;
  uint64_t observations = 0;
  for (const auto& blocker : run.lock_blockers) observations += blocker.observations;
  const double total_aas = summary.lock_wait_aas;
  SectionTable table;
  table.title = "lock waits: who blocked them";
  table.notes.push_back(fmt::format(
      "{} lookups of pg_blocking_pids while Lock waits existed saw {} blocked backends; Lock waits "
      "of client backends averaged {:.2f} sessions, shared out below by what blocked them.",
      run.lock_lookups, observations, total_aas));
  table.header = {"share", "AAS", "lock", "blocker", "state", "statement"};
  table.right_aligned = {true, true, false, false, false, false};
  // run.lock_blockers is sorted by observations: the top rows, then the rest as one.
  uint64_t other = 0;
  for (size_t index = 0; index < run.lock_blockers.size(); ++index) {
    const auto& blocker = run.lock_blockers[index];
    if (index >= kTopLockRows) {
      other += blocker.observations;
      continue;
    }
    const double share =
        ratio(static_cast<double>(blocker.observations), static_cast<double>(observations));
    std::string who = blocker.who();
    if (blocker.chain_depth > 1) who += fmt::format(", chain of {}", blocker.chain_depth);
    std::string state = blocker.blocker_state;
    if (blocker.max_xact_age >= base::Seconds(0) && blocker.prepared.empty()) {  // who() has it
      state += fmt::format(" {:.1f} s", blocker.max_xact_age.count());
    }
    const std::string& object =
        blocker.object.empty() && blocker.blockers == 1 ? blocker.example_object : blocker.object;
    table.rows.push_back(
        {fmt::format("{:.1f}%", 100 * share), fmt::format("{:.2f}", share * total_aas),
         object.empty() ? blocker.lock_type : fmt::format("{} \"{}\"", blocker.lock_type, object),
         who, state, blocker.blocker_statement});
  }
  if (other > 0) {
    const double share = ratio(static_cast<double>(other), static_cast<double>(observations));
    table.rows.push_back(
        {fmt::format("{:.1f}%", 100 * share), fmt::format("{:.2f}", share * total_aas),
         fmt::format("other ({} kinds)", run.lock_blockers.size() - kTopLockRows), "", "", ""});
  }
  return table;
}

namespace {

// The statements table's title, note and columns (with calls and mean time where
// pg_stat_statements was loaded).
SectionTable statements_table_heading(bool with_calls, bool exact) {
  SectionTable table;
  table.title = "statements: which statement waits on what";
  // A traced run's statements are the exact time of the processes that had the query id.
  const std::string basis = exact ? "traced time" : "non-idle samples";
  table.notes.push_back(
      with_calls ? fmt::format("AAS per query id ({}), its share of the load and its top waits; "
                               "calls and mean time from pg_stat_statements over the run; "
                               "literals shown as ?.",
                               basis)
                 : fmt::format("AAS per query id ({}), its share of the load and its top waits "
                               "(no calls and mean time: pg_stat_statements was not loaded); "
                               "literals shown as ?.",
                               basis));
  if (with_calls) {
    table.header = {"AAS", "share", "calls", "mean ms", "top waits", "statement"};
    table.right_aligned = {true, true, true, true, false, false};
  } else {
    table.header = {"AAS", "share", "top waits", "statement"};
    table.right_aligned = {true, true, false, false};
  }
  return table;
}

}  // namespace

std::optional<SectionTable> statements_section(const model::Run& run, size_t top) {
  if (run.statements.empty()) return std::nullopt;
  uint64_t total = 0;
  bool with_calls = false;
  for (const auto& statement : run.statements) {
    total += statement.samples;
    with_calls = with_calls || statement.calls.has_value();
  }
  const double snapshots = static_cast<double>(run.profile.snapshots());
  SectionTable table = statements_table_heading(with_calls, run.profile.exact());
  const auto aas = [&](uint64_t samples) {
    return fmt::format("{:.2f}", ratio(static_cast<double>(samples), snapshots));
  };
  const auto share = [&](uint64_t samples) {
    return fmt::format("{:.1f}%",
                       100 * ratio(static_cast<double>(samples), static_cast<double>(total)));
  };
  // A statement whose text was never seen (it ran between two lookups) joins "other": a bare
  // query id tells a reader nothing.
  uint64_t other_samples = 0;
  size_t other_rows = 0;
  size_t shown = 0;
  for (const auto& statement : run.statements) {
    if (shown >= top || statement.text.empty()) {
      other_samples += statement.samples;
      ++other_rows;
      continue;
    }
    ++shown;
    std::vector<std::string> row{aas(statement.samples), share(statement.samples)};
    if (with_calls) {
      row.push_back(statement.calls ? fmt::format("{}", *statement.calls) : "");
      row.push_back(statement.mean_exec ? fmt::format("{:.3f}", statement.mean_exec->count()) : "");
    }
    row.push_back(top_waits(statement, 3));
    row.push_back(statement.text);
    table.rows.push_back(std::move(row));
    table.bars.push_back(class_shares(statement));
  }
  if (other_rows > 0) {
    std::vector<std::string> row{aas(other_samples), share(other_samples)};
    if (with_calls) row.insert(row.end(), {"", ""});
    row.push_back("");
    row.push_back(fmt::format("other ({} statements)", other_rows));
    table.rows.push_back(std::move(row));
    table.bars.emplace_back();
  }
  return table;
}

std::optional<SectionTable> checkpoint_section(const model::Run& run, size_t top) {
  if (!run.checkpoint_after) return std::nullopt;
  const auto& checkpoint = *run.checkpoint_after;
  SectionTable table;
  table.title = fmt::format("checkpoint after the run: {:.2f} s (from {:.1f} s)",
                            checkpoint.duration.count(), checkpoint.start.count());
  if (!checkpoint.error.empty()) table.notes.push_back("CHECKPOINT failed: " + checkpoint.error);
  table.notes.push_back(
      "waits of every backend in the intervals marked CKPT in the timeline (the first may end the "
      "load), idle not counted");
  table.header = {"wait", "backend type", "samples", "AAS"};
  table.right_aligned = {false, false, true, true};
  std::map<std::pair<std::string, std::string>, uint64_t> merged;
  for (const auto& [key, count] : checkpoint.profile.counts()) {
    if (model::is_idle(key)) continue;
    merged[{model::display_name(key), key.backend_type}] += count;
  }
  std::vector<std::pair<uint64_t, std::pair<std::string, std::string>>> ranked;
  for (const auto& [name, count] : merged) ranked.emplace_back(count, name);
  std::sort(ranked.rbegin(), ranked.rend());
  const auto snapshots = static_cast<double>(checkpoint.profile.snapshots());
  for (size_t index = 0; index < std::min(top, ranked.size()); ++index) {
    const auto& [count, name] = ranked[index];
    table.rows.push_back({name.first, name.second, std::to_string(count),
                          fmt::format("{:.2f}", ratio(static_cast<double>(count), snapshots))});
  }
  return table;
}

std::optional<SectionTable> run_to_run_section(const model::Run& run) {
  if (!run.run_to_run) return std::nullopt;
  const auto& spread = *run.run_to_run;
  const char* compared =
      "the same workload and command, host, server version and non-default settings";
  SectionTable table;
  if (spread.figures.empty()) {
    table.title = "run to run: not estimated";
    table.notes.push_back(fmt::format(
        "{} earlier comparable run{} in this data directory ({}), {} needed: the errors above are "
        "within-run and do not show how much a repeat of this run varies",
        spread.runs, spread.runs == 1 ? "" : "s", compared, spread.needed));
    return table;
  }
  table.title = fmt::format("run to run: from {} earlier comparable runs", spread.runs);
  table.notes.push_back(fmt::format(
      "a repeat of this run should land within ± (95 %): t({}) x sqrt(2) x the standard deviation "
      "between the {} newest earlier runs of this data directory with {}; it includes what the "
      "within-run errors above cannot see (caching, scheduling, checkpoints)",
      spread.runs - 1, spread.runs, compared));
  table.header = {"figure", "this run", "a repeat within", "sd between runs"};
  table.right_aligned = {false, true, true, true};
  for (const auto& figure : spread.figures) {
    if (figure.name == "tps") {
      table.rows.push_back({"steady-state tps", fmt::format("{:.1f}", figure.value),
                            fmt::format("± {:.1f} ({:.1f} %)", figure.half_width,
                                        100 * ratio(figure.half_width, figure.value)),
                            fmt::format("{:.1f}", figure.sd)});
    } else {
      table.rows.push_back({"share of " + figure.name, fmt::format("{:.1f}%", 100 * figure.value),
                            fmt::format("± {:.1f} points", 100 * figure.half_width),
                            fmt::format("{:.1f} points", 100 * figure.sd)});
    }
  }
  return table;
}

std::vector<SectionTable> explaining_sections(const model::Run& run,
                                              const model::Summary& summary) {
  std::vector<SectionTable> sections;
  for (const auto& section :
       {run_to_run_section(run), kernel_section(summary), lock_section(run, summary),
        statements_section(run), checkpoint_section(run)}) {
    if (section) sections.push_back(*section);
  }
  return sections;
}

}  // namespace pgwaitprof::exporters::report_detail
