// The YAML reading helpers behind every configuration file pgwaitprof validates (the daemon
// configuration, matrix plans): one Document per file that turns positions into the
// "FILE:LINE:COLUMN: " prefix of every error, readers for maps with a fixed set of keys, and typed
// scalar readers that report their own type and range errors at the value's position. Internal to
// the config library.
#pragma once

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_error.h"
#include "config/numbers.h"
#include "config/quote.h"

namespace pgwaitprof::config::yaml {

std::string join_quoted(std::span<const std::string_view> words);
std::string join_quoted(const std::vector<std::string>& words);
std::string_view kind_name(const YAML::Node& node);
// Quoted scalars ('x', "x", !!str x) are strings even when they look like numbers or booleans.
bool is_quoted(const YAML::Node& node);
// How a scalar is echoed in a message: numbers as written, everything else quoted.
std::string shown(const YAML::Node& node);

// One value to validate: a map entry (named by its key) or a list item (named by its list).
struct Value {
  std::string name;
  YAML::Node node;
  YAML::Mark key_mark;  // where "missing value" points: a null value's own mark is the next token
};

// One configuration file.
class Document {
 public:
  Document(std::string_view file_name, std::string_view what)
      : file_name_(file_name), what_(what) {}
  [[noreturn]] void fail(const YAML::Mark& mark, std::string_view message) const;
  // The root node; Null for an empty file. Syntax errors and extra documents are errors.
  YAML::Node load(std::string_view yaml_text) const;

 private:
  std::string file_name_;
  std::string what_;
};

// A map with a fixed set of keys: anything else is reported at construction, in document order,
// before any value is looked at, so a misspelt key is never masked by a later value error.
class MapReader {
 public:
  MapReader(const Document& doc, const YAML::Node& map,
            std::initializer_list<std::string_view> keys)
      : MapReader(doc, map, std::span<const std::string_view>(keys.begin(), keys.size())) {}
  MapReader(const Document& doc, const YAML::Node& map, std::span<const std::string_view> keys);
  const Value* find(std::string_view key) const;
  // Where "missing required key" points: the map's first key.
  const YAML::Mark& mark() const { return mark_; }

 private:
  YAML::Mark mark_;
  std::vector<Value> entries_;
};

// The entries of a YAML map, in document order, with scalar unique keys.
std::vector<Value> map_entries(const Document& doc, const YAML::Node& map);

// `expected` completes "must be ...": "a string", "a number", "true or false".
const YAML::Node& require_scalar(const Document& doc, const Value& value,
                                 std::string_view expected);
[[noreturn]] void fail_invalid(const Document& doc, const Value& value, std::string_view rule);

// Whether "" is a meaningful value, and whether `key:` with nothing after it means "" too (only
// where the empty value has a documented meaning, such as a dsn that defers to PG* variables).
enum class Empty { kRejected, kAllowed, kAllowedAsNull };

std::string read_string(const Document& doc, const Value& value, Empty empty);
long long read_integer(const Document& doc, const Value& value, long long min, long long max);
double read_number(const Document& doc, const Value& value);
double read_number(const Document& doc, const Value& value, double min, double max);
bool read_bool(const Document& doc, const Value& value);
// cpu_profile: true (kDefaultCpuProfileHz), false (0) or a rate in Hz (1-999).
int read_cpu_profile(const Document& doc, const Value& value);
std::string read_choice(const Document& doc, const Value& value,
                        std::span<const std::string_view> choices);
std::string read_choice(const Document& doc, const Value& value,
                        const std::vector<std::string>& choices);
// Seconds as a plain integer (30) or a string with units ("30s", "2m", "1h30m").
std::chrono::seconds read_duration(const Document& doc, const Value& value, long long min_s,
                                   long long max_s);
std::vector<Value> read_list(const Document& doc, const Value& value);
std::vector<std::string> read_string_list(const Document& doc, const Value& value);
// A list of pgbench arguments whose numeric options hold valid numbers (check_pgbench_numbers).
std::vector<std::string> read_pgbench_args(const Document& doc, const Value& value);
std::vector<Value> read_map(const Document& doc, const Value& value);
std::vector<Value> read_map_list(const Document& doc, const Value& value);

// Letters, digits, "_", "." and "-": names of targets and variants.
bool is_name(std::string_view text);

// The largest configuration file or plan read: 50 times the annotated example, and parsed in
// about 0.3 s even when it is all labels (yaml-cpp takes some 20 us a key). The daemon parses
// on its I/O thread at a reload, and a file of 100 MB took 15 s and 320 MB of memory.
inline constexpr std::size_t kMaxFileBytes = std::size_t{256} * 1024;

// The whole file; ConfigError "could not open WHAT "PATH": REASON" when it cannot be read,
// "WHAT "PATH" is too large (more than 256 KiB)" beyond kMaxFileBytes.
std::string read_file(const std::filesystem::path& path, std::string_view what);

}  // namespace pgwaitprof::config::yaml
