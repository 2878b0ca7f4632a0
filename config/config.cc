// Parsing and strict validation of the daemon configuration and of matrix plans. Everything a
// user can get wrong in a YAML file is reported here, once, as a single line that names
// file:line:column, so nothing downstream has to re-check a value or guess where it came from.
#include "config/config.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <memory>
#include <set>
#include <span>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace pgwaitprof::config {
namespace {

// Shared by daemon runs and matrix plans: the built-in pgbench workloads.
constexpr auto kWorkloads = std::to_array<std::string_view>(
    {"tpcb", "tpcb-func", "select-only", "update-5rows", "bulk-copy"});
constexpr auto kLogLevels =
    std::to_array<std::string_view>({"trace", "debug", "info", "warn", "error", "off"});
constexpr auto kSources = std::to_array<std::string_view>({"auto", "activity", "pg_wait_sampling"});
constexpr auto kJobsRules =
    std::to_array<std::string_view>({"min(clients, cores)", "clients", "cores"});

// Label names the exporter already uses (or Prometheus reserves): an extra constant label with
// one of these names would make the exposition invalid at the first scrape, long after start-up.
constexpr auto kReservedLabels = std::to_array<std::string_view>(
    {"target", "backend_type", "state", "wait_event_type", "wait_event", "run_id", "workload",
     "version", "revision", "le", "quantile", "job", "instance"});

// The matrix sets these itself for every cell; a copy in pgbench_args would silently override
// the plan (pgbench keeps the last occurrence) and mislabel the results.
constexpr auto kPlanOwnedPgbenchOptions = std::to_array<std::string_view>(
    {"-c", "-j", "-T", "-t", "--client", "--jobs", "--time", "--transactions"});

constexpr long long kMaxSecondsPerDay = 86400;

// Values are echoed in messages; keep them on one line and short so what() stays one line.
std::string quote(std::string_view text) {
  constexpr std::size_t kMaxShown = 80;
  std::string out = "\"";
  for (std::size_t index = 0; index < text.size(); ++index) {
    if (index == kMaxShown) {
      out += "...";
      break;
    }
    const char character = text[index];
    if (character == '\n') {
      out += "\\n";
    } else if (character == '\r') {
      out += "\\r";
    } else if (character == '\t') {
      out += "\\t";
    } else if (static_cast<unsigned char>(character) < 0x20) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(character));
    } else {
      out += character;
    }
  }
  out += '"';
  return out;
}

std::string join_quoted(std::span<const std::string_view> words) {
  std::string out;
  for (const std::string_view word : words) {
    if (!out.empty()) out += ", ";
    out += quote(word);
  }
  return out;
}

// A YAML plain integer (decimal, optional sign). Values too large for long long saturate, so
// that the caller's range check reports them as out of range rather than as not a number.
std::optional<long long> parse_integer(std::string_view text) {
  const bool negative = text.starts_with('-');
  if (negative || text.starts_with('+')) text.remove_prefix(1);
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  long long magnitude = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), magnitude);
  if (end != text.data() + text.size()) return std::nullopt;
  if (error == std::errc::result_out_of_range) {
    magnitude = std::numeric_limits<long long>::max();
  } else if (error != std::errc{}) {
    return std::nullopt;
  }
  return negative ? -magnitude : magnitude;
}

// A finite decimal number; "inf" and "nan" are not valid rates or intervals.
std::optional<double> parse_number(std::string_view text) {
  const bool negative = text.starts_with('-');
  if (negative || text.starts_with('+')) text.remove_prefix(1);
  if (text.empty() || !(text.front() == '.' || (text.front() >= '0' && text.front() <= '9'))) {
    return std::nullopt;
  }
  double magnitude = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), magnitude,
                                            std::chars_format::general);
  if (error != std::errc{} || end != text.data() + text.size() || !std::isfinite(magnitude)) {
    return std::nullopt;
  }
  return negative ? -magnitude : magnitude;
}

std::string_view kind_name(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Null:
      return "empty";
    case YAML::NodeType::Scalar:
    case YAML::NodeType::Undefined:
      break;
  }
  return "a scalar";
}

// Quoted scalars ('x', "x", !!str x) are strings even when they look like numbers or booleans:
// `hz: "100"` is a type error, as it would be for any typed YAML consumer.
bool is_quoted(const YAML::Node& node) {
  return node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str";
}

// How a scalar is echoed in a message: numbers as written, everything else quoted.
std::string shown(const YAML::Node& node) {
  if (!is_quoted(node) && parse_number(node.Scalar())) return node.Scalar();
  return quote(node.Scalar());
}

// One value to validate: a map entry (named by its key) or a list item (named by its list).
struct Value {
  std::string name;
  YAML::Node node;
  YAML::Mark key_mark;  // where "missing value" points: a null value's own mark is the next token
};

// Records where each document's root node starts; the parse itself builds nothing.
class RootMarks : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> marks;

  void OnDocumentStart(const YAML::Mark& /*mark*/) override { depth_ = 0; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t /*anchor*/) override { on_node(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t /*anchor*/) override { on_node(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                const std::string& /*value*/) override {
    on_node(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& /*tag*/,
                       YAML::anchor_t /*anchor*/, YAML::EmitterStyle::value /*style*/) override {
    on_node(mark);
    ++depth_;
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                  YAML::EmitterStyle::value /*style*/) override {
    on_node(mark);
    ++depth_;
  }
  void OnMapEnd() override { --depth_; }

 private:
  void on_node(const YAML::Mark& mark) {
    if (depth_ == 0) marks.push_back(mark);
  }

  int depth_ = 0;
};

// One configuration file: turns positions into the "FILE:LINE:COLUMN: " prefix of every error.
class Document {
 public:
  Document(std::string_view file_name, std::string_view what)
      : file_name_(file_name), what_(what) {}

  [[noreturn]] void fail(const YAML::Mark& mark, std::string_view message) const {
    // yaml-cpp counts from 0; editors and compilers count from 1.
    const int line = mark.is_null() ? 1 : mark.line + 1;
    const int column = mark.is_null() ? 1 : mark.column + 1;
    throw ConfigError(fmt::format("{}:{}:{}: {}", file_name_, line, column, message));
  }

  // The root node; Null for an empty file. Syntax errors and extra documents are errors.
  YAML::Node load(std::string_view yaml_text) const {
    const std::string text(yaml_text);
    RootMarks roots;
    try {
      // Not YAML::LoadAll: in yaml-cpp 0.7 it never returns on a stray "," (yaml-cpp issue
      // #1040), appending empty documents at the same position until memory runs out. Three
      // documents are enough to tell that case from a genuine second document.
      std::istringstream stream(text);
      YAML::Parser parser(stream);
      while (roots.marks.size() < 3 && parser.HandleNextDocument(roots)) {
      }
    } catch (const YAML::Exception& error) {
      fail(error.mark, fmt::format("invalid YAML: {}", error.msg));
    }
    for (std::size_t index = 1; index < roots.marks.size(); ++index) {
      const YAML::Mark& mark = roots.marks[index];
      if (mark.pos == roots.marks[index - 1].pos) {
        // A document that consumed nothing: the parser is stuck on a token it cannot place.
        const auto pos = static_cast<std::size_t>(std::max(mark.pos, 0));
        fail(mark, fmt::format("invalid YAML: unexpected {}",
                               pos < text.size() ? quote(text.substr(pos, 1)) : "end of file"));
      }
    }
    if (roots.marks.size() > 1) {
      fail(roots.marks[1], fmt::format("{} must be a single YAML document", what_));
    }
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::Exception& error) {
      fail(error.mark, fmt::format("invalid YAML: {}", error.msg));
    }
    if (!root.IsNull() && !root.IsMap()) {
      fail(root.Mark(), fmt::format("{} must be a map, not {}", what_, kind_name(root)));
    }
    return root;
  }

 private:
  std::string file_name_;
  std::string what_;
};

// The entries of a YAML map, in document order, with scalar unique keys.
std::vector<Value> map_entries(const Document& doc, const YAML::Node& map) {
  std::vector<Value> entries;
  if (map.IsNull()) return entries;
  std::set<std::string, std::less<>> seen;
  for (const auto& entry : map) {
    // A copy: the iterator's pair is a temporary, and a reference into it would dangle.
    const YAML::Node key = entry.first;
    if (!key.IsScalar()) {
      doc.fail(key.Mark(),
               fmt::format("invalid configuration key (must be a string, not {})", kind_name(key)));
    }
    if (!seen.insert(key.Scalar()).second) {
      doc.fail(key.Mark(), fmt::format("duplicate configuration key {}", quote(key.Scalar())));
    }
    entries.push_back(Value{key.Scalar(), entry.second, key.Mark()});
  }
  return entries;
}

// A map with a fixed set of keys: anything else is reported at construction, in document order,
// before any value is looked at, so a misspelt key is never masked by a later value error.
class MapReader {
 public:
  MapReader(const Document& doc, const YAML::Node& map,
            std::initializer_list<std::string_view> keys)
      : mark_(map.IsNull() ? YAML::Mark() : map.Mark()), entries_(map_entries(doc, map)) {
    for (const Value& entry : entries_) {
      if (std::find(keys.begin(), keys.end(), entry.name) == keys.end()) {
        doc.fail(entry.key_mark,
                 fmt::format("unrecognized configuration key {}", quote(entry.name)));
      }
    }
  }

  const Value* find(std::string_view key) const {
    for (const Value& entry : entries_) {
      if (entry.name == key) return &entry;
    }
    return nullptr;
  }

  // Where "missing required key" points: the map's first key.
  const YAML::Mark& mark() const { return mark_; }

 private:
  YAML::Mark mark_;
  std::vector<Value> entries_;
};

// ---- scalar readers: each reports its own type and range errors at the value's position ----

// `expected` completes "must be ...": "a string", "a number", "true or false".
const YAML::Node& require_scalar(const Document& doc, const Value& value,
                                 std::string_view expected) {
  if (value.node.IsNull()) {
    doc.fail(value.key_mark, fmt::format("missing value for {}", quote(value.name)));
  }
  if (!value.node.IsScalar()) {
    doc.fail(value.node.Mark(), fmt::format("{} must be {}, not {}", quote(value.name), expected,
                                            kind_name(value.node)));
  }
  return value.node;
}

[[noreturn]] void fail_invalid(const Document& doc, const Value& value, std::string_view rule) {
  doc.fail(value.node.Mark(), fmt::format("invalid value for {}: {} ({})", quote(value.name),
                                          shown(value.node), rule));
}

// Whether "" is a meaningful value, and whether `key:` with nothing after it means "" too (only
// where the empty value has a documented meaning, such as a dsn that defers to PG* variables).
enum class Empty { kRejected, kAllowed, kAllowedAsNull };

// Any scalar is a string (`label: 2024` is fine).
std::string read_string(const Document& doc, const Value& value, Empty empty) {
  if (empty == Empty::kAllowedAsNull && value.node.IsNull()) return "";
  const std::string& text = require_scalar(doc, value, "a string").Scalar();
  if (empty == Empty::kRejected && text.empty()) fail_invalid(doc, value, "must not be empty");
  return text;
}

long long read_integer(const Document& doc, const Value& value, long long min, long long max) {
  const YAML::Node& node = require_scalar(doc, value, "an integer");
  std::optional<long long> number;
  if (!is_quoted(node)) number = parse_integer(node.Scalar());
  if (!number) {
    fail_invalid(doc, value,
                 is_quoted(node) && parse_integer(node.Scalar())
                     ? "must be an integer, not a string"
                     : "must be an integer");
  }
  if (*number < min || *number > max) {
    fail_invalid(doc, value, fmt::format("must be between {} and {}", min, max));
  }
  return *number;
}

double read_number(const Document& doc, const Value& value) {
  const YAML::Node& node = require_scalar(doc, value, "a number");
  std::optional<double> number;
  if (!is_quoted(node)) number = parse_number(node.Scalar());
  if (!number) {
    fail_invalid(doc, value,
                 is_quoted(node) && parse_number(node.Scalar()) ? "must be a number, not a string"
                                                                : "must be a number");
  }
  return *number;
}

double read_number(const Document& doc, const Value& value, double min, double max) {
  const double number = read_number(doc, value);
  if (number < min || number > max) {
    fail_invalid(doc, value, fmt::format("must be between {} and {}", min, max));
  }
  return number;
}

bool read_bool(const Document& doc, const Value& value) {
  const YAML::Node& node = require_scalar(doc, value, "true or false");
  if (!is_quoted(node)) {
    std::string text = node.Scalar();
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char character) { return std::tolower(character); });
    if (text == "true" || text == "yes" || text == "on") return true;
    if (text == "false" || text == "no" || text == "off") return false;
  }
  fail_invalid(doc, value, "must be true or false");
}

std::string read_choice(const Document& doc, const Value& value,
                        std::span<const std::string_view> choices) {
  const std::string& text = require_scalar(doc, value, "a string").Scalar();
  if (std::find(choices.begin(), choices.end(), text) == choices.end()) {
    fail_invalid(doc, value, fmt::format("must be one of {}", join_quoted(choices)));
  }
  return text;
}

// Seconds as a plain integer (30) or a string with units ("30s", "2m", "1h30m"), as people
// write them in pgbench -T and in mailing-list posts.
std::chrono::seconds read_duration(const Document& doc, const Value& value, long long min_s,
                                   long long max_s) {
  const std::string_view text = require_scalar(doc, value, "a duration").Scalar();
  const std::string format_rule =
      R"(must be a whole number of seconds or a duration such as "30s", "2m" or "1h30m")";
  long long total_s = 0;
  if (const auto seconds = parse_integer(text)) {
    total_s = *seconds;
  } else {
    // Units in decreasing order, each at most once: "1h30m" yes, "30m1h" and "1m1m" no.
    constexpr auto kUnits =
        std::to_array<std::pair<char, long long>>({{'h', 3600}, {'m', 60}, {'s', 1}});
    std::size_t next_unit = 0;
    std::size_t position = 0;
    if (text.empty()) fail_invalid(doc, value, format_rule);
    while (position < text.size()) {
      const std::size_t digits_begin = position;
      while (position < text.size() && text[position] >= '0' && text[position] <= '9') ++position;
      if (position == digits_begin || position == text.size()) {
        fail_invalid(doc, value, format_rule);
      }
      const auto count = parse_integer(text.substr(digits_begin, position - digits_begin));
      while (next_unit < kUnits.size() && kUnits[next_unit].first != text[position]) ++next_unit;
      if (next_unit == kUnits.size() || !count) fail_invalid(doc, value, format_rule);
      // Saturate instead of overflowing; anything this large fails the range check anyway.
      const long long unit_s = kUnits[next_unit].second;
      total_s = *count > (std::numeric_limits<long long>::max() / unit_s) - total_s
                    ? std::numeric_limits<long long>::max()
                    : total_s + *count * unit_s;
      ++next_unit;
      ++position;
    }
  }
  if (total_s < min_s || total_s > max_s) {
    fail_invalid(doc, value, fmt::format("must be between {} and {} seconds", min_s, max_s));
  }
  return std::chrono::seconds(total_s);
}

// A list value, or an empty one for `key:` with nothing after it (a list whose items were all
// commented out).
std::vector<Value> read_list(const Document& doc, const Value& value) {
  std::vector<Value> items;
  if (value.node.IsNull()) return items;
  if (!value.node.IsSequence()) {
    doc.fail(value.node.Mark(),
             fmt::format("{} must be a list, not {}", quote(value.name), kind_name(value.node)));
  }
  for (const auto& item : value.node) {
    items.push_back(Value{value.name, item, item.Mark()});
  }
  return items;
}

std::vector<std::string> read_string_list(const Document& doc, const Value& value) {
  std::vector<std::string> strings;
  for (const Value& item : read_list(doc, value)) {
    if (!item.node.IsNull() && !item.node.IsScalar()) {
      doc.fail(item.node.Mark(), fmt::format("each item of {} must be a string, not {}",
                                             quote(value.name), kind_name(item.node)));
    }
    strings.push_back(read_string(doc, item, Empty::kRejected));
  }
  return strings;
}

// A map value (labels, settings); an empty one for `key:` with nothing after it.
std::vector<Value> read_map(const Document& doc, const Value& value) {
  if (!value.node.IsNull() && !value.node.IsMap()) {
    doc.fail(value.node.Mark(),
             fmt::format("{} must be a map, not {}", quote(value.name), kind_name(value.node)));
  }
  return map_entries(doc, value.node);
}

// The items of a list of maps (targets, runs, variants).
std::vector<Value> read_map_list(const Document& doc, const Value& value) {
  std::vector<Value> items = read_list(doc, value);
  for (const Value& item : items) {
    if (!item.node.IsMap()) {
      doc.fail(item.node.Mark(), fmt::format("each item of {} must be a map, not {}",
                                             quote(value.name), kind_name(item.node)));
    }
  }
  return items;
}

// ---- names ----

bool is_name(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char character) {
    return (character >= 'a' && character <= 'z') || (character >= 'A' && character <= 'Z') ||
           (character >= '0' && character <= '9') || character == '_' || character == '.' ||
           character == '-';
  });
}

// Prometheus label names: [a-zA-Z_][a-zA-Z0-9_]*.
bool is_label_name(std::string_view text) {
  if (text.empty() || (text.front() >= '0' && text.front() <= '9')) return false;
  return std::all_of(text.begin(), text.end(), [](char character) {
    return (character >= 'a' && character <= 'z') || (character >= 'A' && character <= 'Z') ||
           (character >= '0' && character <= '9') || character == '_';
  });
}

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

// A bind address is HOST:PORT with an IPv6 host in brackets, as the exporter's HTTP server
// expects; checked here so a typo fails at start-up rather than when the listener is opened.
std::string read_listen(const Document& doc, const Value& value) {
  std::string text = read_string(doc, value, Empty::kRejected);
  const std::string rule = R"(must be HOST:PORT, such as "127.0.0.1:9816" or "[::1]:9816")";
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) fail_invalid(doc, value, rule);
  const std::string_view host = std::string_view(text).substr(0, colon);
  if (host.front() == '[' ? host.back() != ']' || host.size() < 3
                          : host.find(':') != std::string_view::npos) {
    fail_invalid(doc, value, rule);
  }
  const std::string_view port_text = std::string_view(text).substr(colon + 1);
  const auto port = parse_integer(port_text);
  if (port_text.empty() || port_text.front() == '+' || port_text.front() == '-' || !port) {
    fail_invalid(doc, value, rule);
  }
  if (*port < 1 || *port > 65535) fail_invalid(doc, value, "port must be between 1 and 65535");
  return text;
}

std::map<std::string, std::string> read_labels(const Document& doc, const Value& value) {
  std::map<std::string, std::string> labels;
  for (const Value& entry : read_map(doc, value)) {
    if (!is_label_name(entry.name) || entry.name.starts_with("__")) {
      doc.fail(entry.key_mark,
               fmt::format("invalid label name {} (must match [a-zA-Z_][a-zA-Z0-9_]* and not "
                           "begin with \"__\")",
                           quote(entry.name)));
    }
    if (std::find(kReservedLabels.begin(), kReservedLabels.end(), entry.name) !=
        kReservedLabels.end()) {
      doc.fail(entry.key_mark,
               fmt::format("label name {} is reserved (used by pgwaitprof's own metrics)",
                           quote(entry.name)));
    }
    labels[entry.name] = read_string(doc, entry, Empty::kAllowed);
  }
  return labels;
}

TargetConfig read_target(const Document& doc, const Value& item, std::size_t target_count,
                         std::set<std::string, std::less<>>& names) {
  const MapReader reader(doc, item.node,
                         {"name", "dsn", "hz", "source", "pg_wait_sampling_poll_ms", "labels"});
  TargetConfig target;
  if (const Value* name = reader.find("name")) {
    target.name = read_string(doc, *name, Empty::kRejected);
    if (!is_name(target.name)) {
      fail_invalid(doc, *name, R"(must contain only letters, digits, "_", "." and "-")");
    }
    if (!names.insert(target.name).second) {
      doc.fail(name->node.Mark(), fmt::format("duplicate target name {}", quote(target.name)));
    }
  } else if (target_count > 1) {
    // The name is the "target" label and the key runs refer to; with one target it can default.
    doc.fail(reader.mark(),
             "missing required key \"name\" (required when there is more than one target)");
  } else {
    target.name = "default";
    names.insert(target.name);
  }
  if (const Value* dsn = reader.find("dsn"))
    target.dsn = read_string(doc, *dsn, Empty::kAllowedAsNull);
  if (const Value* hz = reader.find("hz")) target.hz = read_number(doc, *hz, kMinHz, kMaxHz);
  if (const Value* source = reader.find("source")) {
    const std::string text = read_choice(doc, *source, kSources);
    target.source = text == "activity"           ? Source::kActivity
                    : text == "pg_wait_sampling" ? Source::kPgWaitSampling
                                                 : Source::kAuto;
  }
  if (const Value* poll = reader.find("pg_wait_sampling_poll_ms")) {
    target.pg_wait_sampling_poll = std::chrono::milliseconds(read_integer(doc, *poll, 100, 60000));
  }
  if (const Value* labels = reader.find("labels")) target.labels = read_labels(doc, *labels);
  return target;
}

RunConfig read_run(const Document& doc, const Value& item,
                   const std::vector<TargetConfig>& targets) {
  const MapReader reader(doc, item.node,
                         {"target", "workload", "label", "pgbench_args", "interval"});
  RunConfig run;
  if (const Value* target = reader.find("target")) {
    run.target = read_string(doc, *target, Empty::kRejected);
    const bool known = std::any_of(targets.begin(), targets.end(),
                                   [&](const TargetConfig& t) { return t.name == run.target; });
    if (!known) {
      std::string names;
      for (const TargetConfig& configured : targets) {
        names += (names.empty() ? "" : ", ") + quote(configured.name);
      }
      fail_invalid(doc, *target, fmt::format("must name a configured target: {}", names));
    }
  } else if (targets.size() == 1) {
    run.target = targets.front().name;
  } else {
    doc.fail(reader.mark(),
             "missing required key \"target\" (required when there is more than one target)");
  }
  if (const Value* workload = reader.find("workload")) {
    run.workload = read_choice(doc, *workload, kWorkloads);
  }
  if (const Value* label = reader.find("label"))
    run.label = read_string(doc, *label, Empty::kAllowedAsNull);
  if (const Value* args = reader.find("pgbench_args")) {
    run.pgbench_args = read_string_list(doc, *args);
  }
  if (const Value* interval = reader.find("interval")) {
    const double interval_s = read_number(doc, *interval);
    if (interval_s <= 0 || interval_s > 3600) {
      fail_invalid(doc, *interval, "must be greater than 0 and at most 3600");
    }
    run.interval = std::chrono::duration<double>(interval_s);
  }
  return run;
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
  std::vector<std::string> args = read_string_list(doc, value);
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
  return args;
}

std::vector<Variant> read_variants(const Document& doc, const Value& value) {
  std::vector<Variant> variants;
  std::set<std::string, std::less<>> names;
  for (const Value& item : read_map_list(doc, value)) {
    const MapReader reader(doc, item.node, {"name", "settings"});
    Variant variant;
    const Value* name = reader.find("name");
    if (!name) doc.fail(reader.mark(), "missing required key \"name\"");
    variant.name = read_string(doc, *name, Empty::kRejected);
    if (!names.insert(variant.name).second) {
      doc.fail(name->node.Mark(), fmt::format("duplicate variant name {}", quote(variant.name)));
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
  if (variants.empty()) variants.push_back(Variant{"default", {}});
  return variants;
}

// POSIX stdio rather than iostreams: errno after fopen/fread is what the message must show.
std::string read_file(const std::filesystem::path& path, std::string_view what) {
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                             &std::fclose);
  if (!file) {
    throw ConfigError(fmt::format("could not open {} {}: {}", what, quote(path.string()),
                                  std::generic_category().message(errno)));
  }
  std::string text;
  std::array<char, 8192> buffer{};
  std::size_t count = 0;
  while ((count = std::fread(buffer.data(), 1, buffer.size(), file.get())) > 0) {
    text.append(buffer.data(), count);
  }
  if (std::ferror(file.get())) {
    throw ConfigError(fmt::format("could not read {} {}: {}", what, quote(path.string()),
                                  std::generic_category().message(errno)));
  }
  return text;
}

}  // namespace

std::string_view to_string(Source source) {
  switch (source) {
    case Source::kAuto:
      return "auto";
    case Source::kActivity:
      return "activity";
    case Source::kPgWaitSampling:
      return "pg_wait_sampling";
  }
  return "auto";
}

ValidatedConfig parse_config(std::string_view yaml_text, std::string_view file_name) {
  const Document doc(file_name, "configuration");
  const MapReader reader(doc, doc.load(yaml_text),
                         {"listen", "data_dir", "log_level", "loadgen_executables", "targets",
                          "runs", "matrix_plans"});
  ValidatedConfig config;
  if (const Value* listen = reader.find("listen")) config.listen = read_listen(doc, *listen);
  if (const Value* data_dir = reader.find("data_dir")) {
    config.data_dir = read_string(doc, *data_dir, Empty::kRejected);
  }
  if (const Value* log_level = reader.find("log_level")) {
    config.log_level = read_choice(doc, *log_level, kLogLevels);
  }
  if (const Value* executables = reader.find("loadgen_executables")) {
    config.loadgen_executables = read_string_list(doc, *executables);
    const std::vector<Value> items = read_list(doc, *executables);
    for (std::size_t index = 0; index < items.size(); ++index) {
      // A relative path with a slash would depend on the daemon's working directory.
      const std::string& executable = config.loadgen_executables[index];
      if (executable.find('/') != std::string::npos && !executable.starts_with('/')) {
        fail_invalid(doc, items[index], "must be a command name or an absolute path");
      }
    }
  }

  const Value* targets = reader.find("targets");
  const std::vector<Value> target_items =
      targets ? read_map_list(doc, *targets) : std::vector<Value>{};
  if (target_items.empty()) {
    doc.fail(targets ? (targets->node.IsNull() ? targets->key_mark : targets->node.Mark())
                     : reader.mark(),
             "at least one target is required");
  }
  std::set<std::string, std::less<>> target_names;
  for (const Value& item : target_items) {
    config.targets.push_back(read_target(doc, item, target_items.size(), target_names));
  }

  if (const Value* runs = reader.find("runs")) {
    for (const Value& item : read_map_list(doc, *runs)) {
      config.runs.push_back(read_run(doc, item, config.targets));
    }
  }
  if (const Value* plans = reader.find("matrix_plans")) {
    // Relative to the configuration file, so a config and its plans can move together.
    const std::filesystem::path base = std::filesystem::path(file_name).parent_path();
    for (const std::string& plan : read_string_list(doc, *plans)) {
      const std::filesystem::path plan_path(plan);
      config.matrix_plans.push_back(plan_path.is_absolute() ? plan_path : base / plan_path);
    }
  }
  return config;
}

ValidatedConfig load_config(const std::filesystem::path& path) {
  return parse_config(read_file(path, "configuration file"), path.string());
}

MatrixPlan parse_matrix_plan(std::string_view yaml_text, std::string_view file_name) {
  const Document doc(file_name, "matrix plan");
  const MapReader reader(doc, doc.load(yaml_text),
                         {"name", "target", "scale", "workload", "clients", "jobs", "duration",
                          "repeats", "variants", "checkpoint", "warmup", "hz", "pgbench_args"});
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
    plan.workload = read_choice(doc, *workload, kWorkloads);
  }
  if (const Value* clients = reader.find("clients")) plan.clients = read_clients(doc, *clients);
  if (const Value* jobs = reader.find("jobs")) plan.jobs = read_jobs(doc, *jobs);
  if (const Value* duration = reader.find("duration")) {
    plan.duration = read_duration(doc, *duration, 1, kMaxSecondsPerDay);
  }
  if (const Value* repeats = reader.find("repeats")) {
    plan.repeats = static_cast<int>(read_integer(doc, *repeats, 1, 100));
  }
  if (const Value* variants = reader.find("variants")) {
    plan.variants = read_variants(doc, *variants);
  } else {
    plan.variants.push_back(Variant{"default", {}});
  }
  if (const Value* checkpoint = reader.find("checkpoint")) {
    plan.checkpoint = read_bool(doc, *checkpoint);
  }
  if (const Value* warmup = reader.find("warmup")) {
    plan.warmup = read_duration(doc, *warmup, 0, kMaxSecondsPerDay);
  }
  if (const Value* hz = reader.find("hz")) plan.hz = read_number(doc, *hz, kMinHz, kMaxHz);
  if (const Value* args = reader.find("pgbench_args")) {
    plan.pgbench_args = read_plan_pgbench_args(doc, *args);
  }
  return plan;
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
