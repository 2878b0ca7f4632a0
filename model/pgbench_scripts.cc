// The scripts a user's pgbench options choose, read as pgbench's getopt_long reads them.
#include "model/pgbench_scripts.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "model/workloads.h"

namespace pgwaitprof::model {
namespace {

// pgbench's builtin scripts, as its -b takes them (a unique prefix is enough).
constexpr std::array<std::string_view, 3> kBuiltins = {"tpcb-like", "simple-update", "select-only"};

// Short options that take a value (pgbench's optstring "b:c:CdD:f:F:h:iI:j:lL:M:nNp:P:qrR:s:St:
// T:U:v"; -d is 17's --dbname and earlier majors' --debug: read as taking none, which at worst
// leaves a database name to be read as an argument that is not an option).
constexpr std::string_view kShortWithValue = "bcDfFhIjLMpPRstTU";
constexpr std::string_view kShortWithoutValue = "CdilnNqrSv";

struct LongOption {
  std::string_view name;
  bool takes_value;
};

// Every major's long options (13-19), so that a value is never read as an option and an
// abbreviation resolves as getopt_long resolves it.
constexpr LongOption kLongOptions[] = {
    {"aggregate-interval", true},
    {"builtin", true},
    {"client", true},
    {"connect", false},
    {"continue-on-error", false},
    {"dbname", true},
    {"debug", false},
    {"define", true},
    {"exit-on-abort", false},
    {"failures-detailed", false},
    {"file", true},
    {"fillfactor", true},
    {"foreign-keys", false},
    {"host", true},
    {"index-tablespace", true},
    {"init-steps", true},
    {"initialize", false},
    {"jobs", true},
    {"latency-limit", true},
    {"log", false},
    {"log-prefix", true},
    {"max-tries", true},
    {"no-vacuum", false},
    {"partition-method", true},
    {"partitions", true},
    {"port", true},
    {"progress", true},
    {"progress-timestamp", false},
    {"protocol", true},
    {"quiet", false},
    {"random-seed", true},
    {"rate", true},
    {"report-latencies", false},
    {"report-per-command", false},
    {"sampling-rate", true},
    {"scale", true},
    {"select-only", false},
    {"show-script", true},
    {"skip-some-updates", false},
    {"tablespace", true},
    {"time", true},
    {"transactions", true},
    {"unlogged-tables", false},
    {"username", true},
    {"vacuum-all", false},
    {"verbose-errors", false},
};

// The long option `name` stands for: itself, or the one option it is a prefix of.
const LongOption* find_long(std::string_view name) {
  const LongOption* found = nullptr;
  for (const auto& option : kLongOptions) {
    if (option.name == name) return &option;
    if (option.name.starts_with(name)) {
      if (found != nullptr) return nullptr;  // ambiguous: pgbench refuses it
      found = &option;
    }
  }
  return found;
}

// NAME[@WEIGHT], split at the last "@" as pgbench does.
PgbenchScript weighted(PgbenchScript::Kind kind, std::string_view value, std::string option) {
  PgbenchScript script{kind, std::string(value), "", std::move(option)};
  if (const auto at = value.rfind('@'); at != std::string_view::npos) {
    script.name = std::string(value.substr(0, at));
    script.weight = std::string(value.substr(at + 1));
  }
  if (kind == PgbenchScript::Kind::kBuiltin) {
    const std::string_view given = script.name;
    const auto matches =
        std::count_if(kBuiltins.begin(), kBuiltins.end(),
                      [&](std::string_view name) { return name.starts_with(given); });
    const auto builtin =
        std::find_if(kBuiltins.begin(), kBuiltins.end(),
                     [&](std::string_view name) { return name.starts_with(given); });
    if (!given.empty() && matches == 1) script.name = std::string(*builtin);
  }
  return script;
}

// One option and its value (if it takes one), as it applies to the scripts.
void add_option(std::vector<PgbenchScript>& scripts, char short_name, std::string_view value,
                const std::string& written) {
  switch (short_name) {
    case 'S':
      scripts.push_back({PgbenchScript::Kind::kBuiltin, "select-only", "", written});
      break;
    case 'N':
      scripts.push_back({PgbenchScript::Kind::kBuiltin, "simple-update", "", written});
      break;
    case 'b':
      // "-b list" prints the builtins and exits: no script.
      if (value != "list")
        scripts.push_back(weighted(PgbenchScript::Kind::kBuiltin, value, written));
      break;
    case 'f':
      scripts.push_back(weighted(PgbenchScript::Kind::kFile, value, written));
      break;
    default:
      break;
  }
}

char short_name_of(std::string_view long_name) {
  if (long_name == "select-only") return 'S';
  if (long_name == "skip-some-updates") return 'N';
  if (long_name == "builtin") return 'b';
  if (long_name == "file") return 'f';
  return '\0';
}

// A cluster of short options ("-S", "-nS", "-fa.sql", "-f" with the next word): returns the
// words it used beyond its own.
size_t read_short(std::vector<PgbenchScript>& scripts, const std::vector<std::string>& args,
                  size_t index) {
  const std::string& word = args[index];
  for (size_t at = 1; at < word.size(); ++at) {
    const char name = word[at];
    if (kShortWithValue.find(name) != std::string_view::npos) {
      if (at + 1 < word.size()) {
        add_option(scripts, name, std::string_view(word).substr(at + 1), word);
        return 0;
      }
      if (index + 1 < args.size()) {
        add_option(scripts, name, args[index + 1], word + " " + args[index + 1]);
        return 1;
      }
      return 0;
    }
    if (kShortWithoutValue.find(name) == std::string_view::npos) return 0;  // pgbench refuses it
    add_option(scripts, name, "", word);
  }
  return 0;
}

size_t read_long(std::vector<PgbenchScript>& scripts, const std::vector<std::string>& args,
                 size_t index) {
  const std::string& word = args[index];
  const auto equals = word.find('=');
  const std::string_view name = std::string_view(word).substr(
      2, equals == std::string::npos ? std::string::npos : equals - 2);
  const LongOption* option = find_long(name);
  if (option == nullptr) return 0;
  const char short_name = short_name_of(option->name);
  if (!option->takes_value) {
    add_option(scripts, short_name, "", word);
    return 0;
  }
  if (equals != std::string::npos) {
    add_option(scripts, short_name, std::string_view(word).substr(equals + 1), word);
    return 0;
  }
  if (index + 1 >= args.size()) return 0;
  add_option(scripts, short_name, args[index + 1], word + " " + args[index + 1]);
  return 1;
}

// The workload of ours that runs exactly this builtin and nothing else, if any.
std::string builtin_workload_name(const std::string& builtin) {
  for (const auto& workload : workloads()) {
    if (!workload.script_file.empty() || !workload.setup_file.empty()) continue;
    const auto scripts = pgbench_scripts(workload.builtin_args);
    if (scripts.size() == 1 && scripts.front().kind == PgbenchScript::Kind::kBuiltin &&
        scripts.front().name == builtin && scripts.front().weight.empty()) {
      return workload.name;
    }
  }
  return builtin;
}

std::string file_name_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::vector<PgbenchScript> pgbench_scripts(const std::vector<std::string>& args) {
  std::vector<PgbenchScript> scripts;
  for (size_t index = 0; index < args.size(); ++index) {
    const std::string& word = args[index];
    if (word == "--") break;  // the rest are arguments, not options
    if (word.starts_with("--")) {
      index += read_long(scripts, args, index);
    } else if (word.starts_with("-") && word.size() > 1) {
      index += read_short(scripts, args, index);
    }
  }
  return scripts;
}

std::optional<std::string> scripts_workload_name(const std::vector<PgbenchScript>& scripts) {
  if (scripts.empty()) return std::nullopt;
  std::string name;
  for (const auto& script : scripts) {
    if (!name.empty()) name += "+";
    name += script.kind == PgbenchScript::Kind::kFile ? "file:" + file_name_of(script.name)
                                                      : builtin_workload_name(script.name);
    if (!script.weight.empty()) name += "@" + script.weight;
  }
  return name;
}

std::optional<std::string> workload_conflict(std::string_view workload,
                                             const std::vector<std::string>& args) {
  const auto scripts = pgbench_scripts(args);
  if (scripts.empty()) return std::nullopt;
  return "workload \"" + std::string(workload) + "\" and pgbench's script option \"" +
         scripts.front().option + "\" cannot be used together";
}

}  // namespace pgwaitprof::model
