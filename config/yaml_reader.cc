// The YAML reading helpers of the config library.
#include "config/yaml_reader.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <limits>
#include <memory>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>

#include "base/regular_file.h"

namespace pgwaitprof::config::yaml {
namespace {

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

}  // namespace

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

std::string join_quoted(std::span<const std::string_view> words) {
  std::string out;
  for (const std::string_view word : words) {
    if (!out.empty()) out += ", ";
    out += quote(word);
  }
  return out;
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

void Document::fail(const YAML::Mark& mark, std::string_view message) const {
  // yaml-cpp counts from 0; editors and compilers count from 1.
  const int line = mark.is_null() ? 1 : mark.line + 1;
  const int column = mark.is_null() ? 1 : mark.column + 1;
  throw ConfigError(fmt::format("{}:{}:{}: {}", file_name_, line, column, message));
}

YAML::Node Document::load(std::string_view yaml_text) const {
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

MapReader::MapReader(const Document& doc, const YAML::Node& map,
                     std::span<const std::string_view> keys)
    : mark_(map.IsNull() ? YAML::Mark() : map.Mark()), entries_(map_entries(doc, map)) {
  for (const Value& entry : entries_) {
    if (std::find(keys.begin(), keys.end(), entry.name) == keys.end()) {
      doc.fail(entry.key_mark, fmt::format("unrecognized configuration key {}", quote(entry.name)));
    }
  }
}

const Value* MapReader::find(std::string_view key) const {
  for (const Value& entry : entries_) {
    if (entry.name == key) return &entry;
  }
  return nullptr;
}

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
  if (auto rule = integer_in_range(*number, min, max)) fail_invalid(doc, value, *rule);
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
  if (auto rule = finite_in_range(number, min, max)) fail_invalid(doc, value, *rule);
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

int read_cpu_profile(const Document& doc, const Value& value) {
  const YAML::Node& node = require_scalar(doc, value, "true, false or a rate in Hz");
  if (!is_quoted(node) && !parse_integer(node.Scalar())) {
    return read_bool(doc, value) ? kDefaultCpuProfileHz : 0;
  }
  return static_cast<int>(read_integer(doc, value, kMinCpuProfileHz, kMaxCpuProfileHz));
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

std::vector<std::string> read_pgbench_args(const Document& doc, const Value& value) {
  std::vector<std::string> args = read_string_list(doc, value);
  if (const auto error = check_pgbench_numbers(args)) {
    fail_invalid(doc, read_list(doc, value)[error->index],
                 fmt::format("the value of pgbench option \"{}\" {}", error->option, error->rule));
  }
  return args;
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

std::string read_choice(const Document& doc, const Value& value,
                        const std::vector<std::string>& choices) {
  std::vector<std::string_view> views(choices.begin(), choices.end());
  return read_choice(doc, value, std::span<const std::string_view>(views));
}

std::string join_quoted(const std::vector<std::string>& words) {
  std::vector<std::string_view> views(words.begin(), words.end());
  return join_quoted(std::span<const std::string_view>(views));
}

bool is_name(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char character) {
    return (character >= 'a' && character <= 'z') || (character >= 'A' && character <= 'Z') ||
           (character >= '0' && character <= '9') || character == '_' || character == '.' ||
           character == '-';
  });
}

// As a regular file only: a FIFO named as a configuration or a plan is refused, not waited on.
std::string read_file(const std::filesystem::path& path, std::string_view what) {
  auto text = base::read_regular_file(path, what, kMaxFileBytes, quote(path.string()));
  if (!text) throw ConfigError(text.error().message);
  return std::move(*text);
}

}  // namespace pgwaitprof::config::yaml
