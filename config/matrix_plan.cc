// Matrix plans: their schema and strict validation.
#include "config/matrix_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <set>
#include <stdexcept>

#include "config/yaml_reader.h"
#include "model/pgbench_scripts.h"
#include "model/workloads.h"

namespace pgwaitprof::config {
namespace {

using namespace yaml;

constexpr auto kJobsRules =
    std::to_array<std::string_view>({"min(clients, cores)", "clients", "cores"});

// The matrix sets these itself for every cell; a copy in pgbench_args would silently override
// the plan (pgbench keeps the last occurrence) and mislabel the results.
constexpr auto kPlanOwnedPgbenchOptions = std::to_array<std::string_view>(
    {"-c", "-j", "-T", "-t", "--client", "--jobs", "--time", "--transactions"});

constexpr long long kMaxSecondsPerDay = 86400;

constexpr auto kMetrics = std::to_array<std::string_view>({"tps", "duration"});
constexpr auto kLoadgens = std::to_array<std::string_view>({"pgbench", "sysbench", "command"});
constexpr auto kSysbenchSteps = std::to_array<std::string_view>({"prepare", "prewarm", "cleanup"});
constexpr auto kSplitAttributes =
    std::to_array<std::string_view>({"kernel", "cpu_model", "server_version", "label"});

// PostgreSQL setting names, including extension ones ("pg_stat_statements.max"). Checked here
// because the name goes into ALTER SYSTEM as an identifier, not as a value.
bool is_setting_name(std::string_view text) {
  if (text.empty() || text.front() == '.' || text.back() == '.' ||
      (text.front() >= '0' && text.front() <= '9')) {
    return false;
  }
  return std::all_of(text.begin(), text.end(), [](char character) {
    return (character >= 'a' && character <= 'z') || (character >= 'A' && character <= 'Z') ||
           (character >= '0' && character <= '9') || character == '_' || character == '.';
  });
}

// The jobs rule, normalized: whitespace inside "min(clients, cores)" is not significant.
std::optional<std::string> normalize_jobs_rule(std::string_view text) {
  std::string compact;
  for (const char character : text) {
    if (character != ' ' && character != '\t') compact += character;
  }
  if (compact == "min(clients,cores)") return std::string(kJobsRules[0]);
  if (compact == "clients" || compact == "cores") return compact;
  return std::nullopt;
}

std::string read_jobs(const Document& doc, const Value& value) {
  const YAML::Node& node = require_scalar(doc, value, "an integer or a string");
  const std::string rule = "must be a positive integer or one of " + join_quoted(kJobsRules);
  if (!is_quoted(node)) {
    if (const auto jobs = parse_integer(node.Scalar())) {
      if (*jobs < 1 || *jobs > std::numeric_limits<int>::max()) fail_invalid(doc, value, rule);
      return std::to_string(*jobs);
    }
  }
  if (auto normalized = normalize_jobs_rule(node.Scalar())) return *normalized;
  fail_invalid(doc, value, rule);
}

std::vector<int> read_clients(const Document& doc, const Value& value) {
  const std::vector<Value> items = read_list(doc, value);
  if (items.empty()) {
    doc.fail(value.node.IsNull() ? value.key_mark : value.node.Mark(),
             fmt::format("{} must list at least one client count", quote(value.name)));
  }
  std::vector<std::pair<int, const Value*>> counts;
  counts.reserve(items.size());
  for (const Value& item : items) {
    counts.emplace_back(static_cast<int>(read_integer(doc, item, 1, 10000)), &item);
  }
  // Sorted so the table's columns ascend whatever order the plan lists them in; a repeated
  // count would be a duplicate column, so it is reported at its second occurrence.
  std::stable_sort(counts.begin(), counts.end(),
                   [](const auto& left, const auto& right) { return left.first < right.first; });
  for (std::size_t index = 1; index < counts.size(); ++index) {
    if (counts[index].first == counts[index - 1].first) {
      // The sort is stable, so of two equal counts the second is the later in the file.
      const YAML::Node& later = counts[index].second->node;
      doc.fail(later.Mark(),
               fmt::format("duplicate value in {}: {}", quote(value.name), shown(later)));
    }
  }
  std::vector<int> clients;
  clients.reserve(counts.size());
  for (const auto& [count, item] : counts) clients.push_back(count);
  return clients;
}

std::vector<std::string> read_plan_pgbench_args(const Document& doc, const Value& value) {
  const std::vector<std::string> args = read_string_list(doc, value);
  const std::vector<Value> items = read_list(doc, value);
  for (std::size_t index = 0; index < args.size(); ++index) {
    const std::string& arg = args[index];
    for (const std::string_view option : kPlanOwnedPgbenchOptions) {
      // "-c", "-c8", "--client", "--client=8" all set what the plan already sets.
      const bool is_short = option.size() == 2;
      const bool matches = is_short ? arg.starts_with(option)
                                    : arg == option || arg.starts_with(std::string(option) + "=");
      if (matches) {
        fail_invalid(doc, items[index],
                     "clients, jobs and duration are set by the plan's \"clients\", \"jobs\" and "
                     "\"duration\"");
      }
    }
  }
  return read_pgbench_args(doc, value);
}

// A variant's server_bin: an absolute directory (a relative one would change meaning when a
// resumed matrix reads the plan's copy in its own directory); a build needs a scratch cluster.
std::filesystem::path read_server_bin(const Document& doc, const Value& value, bool has_target) {
  if (has_target) {
    doc.fail(value.key_mark,
             "\"server_bin\" runs the variant in a scratch cluster of that build: it cannot be "
             "used with \"target\"");
  }
  std::filesystem::path dir = read_string(doc, value, Empty::kRejected);
  if (!dir.is_absolute()) fail_invalid(doc, value, "must be an absolute directory");
  // One build however it is spelled ("bin/", "bin/."): one cluster.
  dir = dir.lexically_normal();
  if (!dir.has_filename() && dir.has_parent_path() && dir != dir.root_path()) {
    dir = dir.parent_path();
  }
  return dir;
}

std::vector<Variant> read_variants(const Document& doc, const Value& value, bool has_target) {
  std::vector<Variant> variants;
  std::set<std::string, std::less<>> names;
  // Where the first variant with a build and the first without one are: a plan mixes neither.
  std::optional<YAML::Mark> with_build;
  std::optional<std::pair<YAML::Mark, std::string>> without_build;
  for (const Value& item : read_map_list(doc, value)) {
    const MapReader reader(doc, item.node, {"name", "settings", "workload", "args", "server_bin"});
    Variant variant;
    const Value* name = reader.find("name");
    if (!name) doc.fail(reader.mark(), "missing required key \"name\"");
    variant.name = read_string(doc, *name, Empty::kRejected);
    if (!names.insert(variant.name).second) {
      doc.fail(name->node.Mark(), fmt::format("duplicate variant name {}", quote(variant.name)));
    }
    if (const Value* workload = reader.find("workload")) {
      variant.workload = read_choice(doc, *workload, model::workload_names());
    }
    if (const Value* args = reader.find("args")) variant.args = read_string_list(doc, *args);
    if (const Value* server_bin = reader.find("server_bin")) {
      variant.server_bin = read_server_bin(doc, *server_bin, has_target);
      if (!with_build) with_build = server_bin->key_mark;
    } else if (!without_build) {
      without_build.emplace(reader.mark(), variant.name);
    }
    if (const Value* settings = reader.find("settings")) {
      for (const Value& setting : read_map(doc, *settings)) {
        if (!is_setting_name(setting.name)) {
          doc.fail(setting.key_mark,
                   fmt::format("invalid setting name {} (must be a PostgreSQL parameter name such "
                               "as \"work_mem\")",
                               quote(setting.name)));
        }
        // "" is a real value for some settings (search_path, for one).
        variant.settings[setting.name] = read_string(doc, setting, Empty::kAllowed);
      }
    }
    variants.push_back(std::move(variant));
  }
  if (with_build && without_build) {
    doc.fail(without_build->first,
             fmt::format("variant {} has no \"server_bin\": in a plan of builds every variant "
                         "names its build",
                         quote(without_build->second)));
  }
  if (variants.empty()) variants.push_back(Variant{"default", {}, "", {}, {}});
  return variants;
}

// metric, transactions, checkpoint_after, cpu_profile, split_by.
void read_fixed_work_keys(const Document& doc, const MapReader& reader, MatrixPlan& plan) {
  if (const Value* transactions = reader.find("transactions")) {
    plan.transactions = static_cast<int>(read_integer(doc, *transactions, 1, 1000000000));
  }
  const auto* workload = model::find_workload(plan.workload);
  if (plan.transactions > 0 || (workload != nullptr && workload->fixed_work)) {
    plan.metric = model::Metric::kDuration;
  }
  if (const Value* metric = reader.find("metric")) {
    plan.metric = *model::parse_metric(read_choice(doc, *metric, kMetrics));
    if (plan.metric == model::Metric::kDuration && !fixed_work(plan)) {
      fail_invalid(doc, *metric,
                   "\"duration\" needs runs that end when their work is done: set "
                   "\"transactions\" or a fixed-work workload such as \"copy\"");
    }
  }
  if (const Value* checkpoint_after = reader.find("checkpoint_after")) {
    plan.checkpoint_after = read_bool(doc, *checkpoint_after);
  }
  if (const Value* cpu = reader.find("cpu_profile"))
    plan.cpu_profile_hz = read_cpu_profile(doc, *cpu);
  if (const Value* split_by = reader.find("split_by")) {
    plan.split_by = read_choice(doc, *split_by, kSplitAttributes);
  }
}

// clients: a list of counts, or "auto" with max_clients (model/adaptive_sweep.h).
void read_clients_keys(const Document& doc, const MapReader& reader, MatrixPlan& plan) {
  const Value* clients = reader.find("clients");
  const Value* max_clients = reader.find("max_clients");
  if (clients && clients->node.IsScalar() && !is_quoted(clients->node) &&
      clients->node.Scalar() == "auto") {
    if (!max_clients) doc.fail(clients->node.Mark(), "\"clients: auto\" needs \"max_clients\"");
    plan.clients_auto = true;
    plan.clients.clear();
    plan.max_clients = static_cast<int>(read_integer(doc, *max_clients, 2, 10000));
    return;
  }
  if (max_clients) {
    fail_invalid(doc, *max_clients, "is the limit of \"clients: auto\" and needs it");
  }
  if (clients) plan.clients = read_clients(doc, *clients);
}

// loadgen, args, setup, teardown: another load generator than pgbench.
void read_loadgen_keys(const Document& doc, const MapReader& reader, MatrixPlan& plan) {
  if (const Value* loadgen = reader.find("loadgen")) {
    plan.loadgen = read_choice(doc, *loadgen, kLoadgens);
  }
  const bool pgbench = plan.loadgen == "pgbench";
  if (const Value* args = reader.find("args")) {
    if (pgbench) fail_invalid(doc, *args, "pgbench's arguments go in \"pgbench_args\"");
    plan.args = read_string_list(doc, *args);
  } else if (plan.loadgen == "command") {
    doc.fail(reader.mark(), "missing required key \"args\" (the command, for loadgen command)");
  }
  for (const char* key : {"setup", "teardown"}) {
    const Value* step = reader.find(key);
    if (step == nullptr) continue;
    if (plan.loadgen != "sysbench") {
      fail_invalid(doc, *step, "set-up and tear-down steps are sysbench's (loadgen: sysbench)");
    }
    (std::string_view(key) == "setup" ? plan.setup : plan.teardown) =
        read_choice(doc, *step, kSysbenchSteps);
  }
  if (!pgbench) {
    if (const Value* args = reader.find("pgbench_args")) {
      fail_invalid(doc, *args, "the load generator's arguments go in \"args\"");
    }
    if (const Value* warmup = reader.find("warmup")) {
      fail_invalid(doc, *warmup, "a warm-up run is pgbench's");
    }
  }
}

// A built-in workload named beside pgbench_args' own script options (-S, -f ...) is refused:
// the user's scripts are the workload, and pgbench would run both, half the transactions each.
void refuse_workload_beside_scripts(const Document& doc, const MapReader& reader) {
  std::vector<Value> named;
  if (const Value* workload = reader.find("workload")) named.push_back(*workload);
  if (const Value* variants = reader.find("variants")) {
    for (const Value& item : read_map_list(doc, *variants)) {
      for (const Value& entry : map_entries(doc, item.node)) {
        if (entry.name == "workload") named.push_back(entry);
      }
    }
  }
  const Value* args = reader.find("pgbench_args");
  if (named.empty() || args == nullptr) return;
  const auto pgbench_args = read_string_list(doc, *args);
  for (const Value& workload : named) {
    const auto name = read_string(doc, workload, Empty::kRejected);
    if (auto conflict = model::workload_conflict(name, pgbench_args)) {
      doc.fail(workload.node.Mark(), *conflict);
    }
  }
}

// duration, repeats, checkpoint, warmup: how long each run is, how often it runs, what comes
// before each.
void read_timing_keys(const Document& doc, const MapReader& reader, MatrixPlan& plan) {
  if (const Value* duration = reader.find("duration")) {
    plan.duration = read_duration(doc, *duration, 1, kMaxSecondsPerDay);
  }
  if (const Value* repeats = reader.find("repeats")) {
    plan.repeats = static_cast<int>(read_integer(doc, *repeats, 1, 100));
  }
  if (const Value* checkpoint = reader.find("checkpoint")) {
    plan.checkpoint = read_bool(doc, *checkpoint);
  }
  if (const Value* warmup = reader.find("warmup")) {
    plan.warmup = read_duration(doc, *warmup, 0, kMaxSecondsPerDay);
  }
}

// hz and source: how the runs are sampled.
void read_sampler_keys(const Document& doc, const MapReader& reader, MatrixPlan& plan) {
  const Value* hz = reader.find("hz");
  if (hz) plan.hz = read_number(doc, *hz, kMinHz, kMaxHz);
  if (const Value* source = reader.find("source")) {
    plan.source =
        *model::parse_sampler_source(read_choice(doc, *source, model::sampler_source_names()));
    if (hz && plan.source == model::SamplerSource::kPgWaitSampling) {
      fail_invalid(doc, *hz,
                   "cannot be used with source pg_wait_sampling: the extension samples at its own "
                   "pg_wait_sampling.profile_period");
    }
  }
}

}  // namespace

bool fixed_work(const MatrixPlan& plan) {
  const auto* workload = model::find_workload(plan.workload);
  return plan.transactions > 0 || (workload != nullptr && workload->fixed_work);
}

bool has_builds(const MatrixPlan& plan) {
  return std::any_of(plan.variants.begin(), plan.variants.end(),
                     [](const Variant& variant) { return !variant.server_bin.empty(); });
}

void apply_overrides(MatrixPlan& plan, const PlanOverrides& overrides) {
  if (overrides.quick) {
    plan.duration = std::chrono::seconds(5);
    plan.repeats = 1;
    if (plan.clients.size() > 2) plan.clients = {plan.clients.front(), plan.clients.back()};
    plan.max_clients = std::min(plan.max_clients, 4);
    plan.scale = std::min(plan.scale, 2);
    plan.warmup = std::chrono::seconds(0);
  }
  if (overrides.duration_s) plan.duration = std::chrono::seconds(*overrides.duration_s);
  if (overrides.repeats) plan.repeats = *overrides.repeats;
  if (overrides.scale) plan.scale = *overrides.scale;
}

MatrixPlan parse_matrix_plan(std::string_view yaml_text, std::string_view file_name) {
  const Document doc(file_name, "matrix plan");
  const MapReader reader(
      doc, doc.load(yaml_text),
      {"name",     "target",       "scale",    "workload",     "clients",          "jobs",
       "duration", "repeats",      "variants", "checkpoint",   "warmup",           "hz",
       "source",   "pgbench_args", "metric",   "transactions", "checkpoint_after", "cpu_profile",
       "split_by", "loadgen",      "args",     "setup",        "teardown",         "max_clients"});
  MatrixPlan plan;
  // The plan's name titles its table and results; a file named fsync.yaml is the "fsync" plan.
  plan.name = std::filesystem::path(file_name).stem().string();
  if (const Value* name = reader.find("name"))
    plan.name = read_string(doc, *name, Empty::kRejected);
  if (const Value* target = reader.find("target"))
    plan.target = read_string(doc, *target, Empty::kAllowedAsNull);
  if (const Value* scale = reader.find("scale")) {
    plan.scale = static_cast<int>(read_integer(doc, *scale, 1, 100000));
  }
  if (const Value* workload = reader.find("workload")) {
    plan.workload = read_choice(doc, *workload, model::workload_names());
  }
  read_clients_keys(doc, reader, plan);
  if (const Value* jobs = reader.find("jobs")) plan.jobs = read_jobs(doc, *jobs);
  read_timing_keys(doc, reader, plan);
  if (const Value* variants = reader.find("variants")) {
    plan.variants = read_variants(doc, *variants, !plan.target.empty());
  } else {
    plan.variants.push_back(Variant{"default", {}, "", {}, {}});
  }
  read_sampler_keys(doc, reader, plan);
  if (const Value* args = reader.find("pgbench_args")) {
    plan.pgbench_args = read_plan_pgbench_args(doc, *args);
  }
  read_fixed_work_keys(doc, reader, plan);
  read_loadgen_keys(doc, reader, plan);
  if (plan.loadgen == "pgbench") refuse_workload_beside_scripts(doc, reader);
  if (plan.clients_auto && plan.metric != model::Metric::kTps) {
    doc.fail(reader.find("clients")->node.Mark(),
             "\"clients: auto\" finds where tps stops rising: it needs runs measured by tps, not "
             "fixed-work runs");
  }
  return plan;
}

std::vector<std::string> cell_loadgen_args(const MatrixPlan& plan, const Variant& variant,
                                           int clients) {
  std::vector<std::string> args = plan.args;
  args.insert(args.end(), variant.args.begin(), variant.args.end());
  const auto replace = [](std::string text, std::string_view name, const std::string& value) {
    for (size_t at; (at = text.find(name)) != std::string::npos;)
      text.replace(at, name.size(), value);
    return text;
  };
  const auto has = [&](std::string_view option) {
    return std::any_of(args.begin(), args.end(), [&](const std::string& arg) {
      return arg == option || arg.starts_with(std::string(option) + "=");
    });
  };
  bool threads = has("--threads");
  bool time = has("--time");
  for (auto& arg : args) {
    arg = replace(arg, "{clients}", std::to_string(clients));
    arg = replace(arg, "{duration}", std::to_string(plan.duration.count()));
  }
  if (plan.loadgen == "sysbench") {
    if (!threads) args.push_back("--threads=" + std::to_string(clients));
    if (!time) args.push_back("--time=" + std::to_string(plan.duration.count()));
  }
  return args;
}

MatrixPlan load_matrix_plan(const std::filesystem::path& path) {
  return parse_matrix_plan(read_file(path, "matrix plan file"), path.string());
}

int jobs_for(const MatrixPlan& plan, int clients, int cores) {
  const int safe_clients = std::max(clients, 1);
  const int safe_cores = std::max(cores, 1);
  int jobs = 0;
  if (const auto fixed = parse_integer(plan.jobs); fixed && *fixed >= 1) {
    // pgbench refuses more threads than clients.
    jobs = static_cast<int>(std::min<long long>(*fixed, safe_clients));
  } else if (const auto rule = normalize_jobs_rule(plan.jobs); rule == "clients") {
    jobs = safe_clients;
  } else if (rule == "cores" || rule == kJobsRules[0]) {
    // "cores" alone would still exceed the clients on a small run: same as the min() rule.
    jobs = std::min(safe_cores, safe_clients);
  } else {
    throw std::invalid_argument(fmt::format("invalid jobs rule {}", quote(plan.jobs)));
  }
  return std::max(jobs, 1);
}

}  // namespace pgwaitprof::config
