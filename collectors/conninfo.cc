// Connection strings as text: passwords masked wherever they appear, a string split for a
// child process, SQL literals. Pure functions on strings, read with libpq's own parser.
#include "collectors/conninfo.h"

#include <fmt/format.h>
#include <libpq-fe.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace pgwaitprof::collectors {
namespace {

// PQconninfoParse's options, freed by PQconninfoFree.
struct ConninfoOptionsDeleter {
  void operator()(PQconninfoOption* options) const { PQconninfoFree(options); }
};
using ConninfoOptions = std::unique_ptr<PQconninfoOption, ConninfoOptionsDeleter>;

// libpq's own reading of a connection string or URI; null when libpq cannot parse it.
ConninfoOptions parse_conninfo(const std::string& conninfo) {
  char* error = nullptr;
  ConninfoOptions options(PQconninfoParse(conninfo.c_str(), &error));
  PQfreemem(error);
  return options;
}

// Options libpq itself never displays (PQconndefaults' dispchar "*"): password, sslpassword.
bool is_secret(const PQconninfoOption& option) {
  return option.dispchar != nullptr && option.dispchar[0] == '*';
}

bool has_secret(const PQconninfoOption* options) {
  for (const PQconninfoOption* option = options; option->keyword != nullptr; ++option) {
    if (option->val != nullptr && is_secret(*option)) return true;
  }
  return false;
}

// keyword=value, quoted with \\ and ' escaped (libpq's own syntax) only where it must be, so
// the string also survives inside a quoted YAML or shell word.
std::string conninfo_pair(const char* keyword, std::string_view raw) {
  const bool quote = raw.empty() || raw.find_first_of(" \t\n'\"\\") != std::string_view::npos;
  std::string value;
  for (const char character : raw) {
    if (character == '\\' || character == '\'') value += '\\';
    value += character;
  }
  if (quote) value = "'" + value + "'";
  return fmt::format("{}={}", keyword, value);
}

constexpr std::string_view kMask = "********";

bool is_space(char character) { return std::isspace(static_cast<unsigned char>(character)) != 0; }

bool starts_with_nocase(std::string_view text, size_t at, std::string_view prefix) {
  if (text.size() - at < prefix.size()) return false;
  for (size_t index = 0; index < prefix.size(); ++index) {
    if (std::tolower(static_cast<unsigned char>(text[at + index])) != prefix[index]) return false;
  }
  return true;
}

bool contains_nocase(std::string_view text, std::string_view lowercase) {
  for (size_t at = 0; at + lowercase.size() <= text.size(); ++at) {
    if (starts_with_nocase(text, at, lowercase)) return true;
  }
  return false;
}

// Where a value in libpq's keyword syntax that starts at `at` ends: a quoted one after its
// unescaped closing quote (or at the end of the text, when a message cut it short: then it is
// not `closed`), a bare one at unescaped white space. A backslash escapes the next character
// in both, as in libpq's conninfo_parse: `password=Sp\\ ace` is one value.
struct ValueEnd {
  size_t end;
  bool closed;
};
ValueEnd conninfo_value_end(std::string_view text, size_t at) {
  const bool quoted = at < text.size() && text[at] == '\'';
  size_t position = quoted ? at + 1 : at;
  while (position < text.size()) {
    const char character = text[position];
    if (character == '\\') {
      position = std::min(position + 2, text.size());
      continue;
    }
    if (quoted && character == '\'') return {position + 1, true};
    if (!quoted && is_space(character)) return {position, true};
    ++position;
  }
  return {text.size(), !quoted};
}

struct Span {
  size_t begin;
  size_t end;  // one past the last byte
};

// The keywords libpq never displays (PQconndefaults' dispchar "*"): password, sslpassword.
const std::vector<std::string>& secret_keywords() {
  static const std::vector<std::string> keywords = [] {
    std::vector<std::string> found;
    PQconninfoOption* defaults = PQconndefaults();
    for (const PQconninfoOption* option = defaults; option != nullptr && option->keyword != nullptr;
         ++option) {
      if (is_secret(*option)) found.emplace_back(option->keyword);
    }
    PQconninfoFree(defaults);
    if (found.empty()) found = {"password", "sslpassword"};  // out of memory: libpq's own list
    return found;
  }();
  return keywords;
}

// The values of secret keywords when the whole text is in libpq's keyword syntax (libpq's
// conninfo_parse: `keyword = value` pairs apart by white space); nothing when it is not, or is
// a URI. Positions are what PQconninfoParse cannot give: mask_secrets_in_place needs them.
std::optional<std::vector<Span>> keyword_syntax_spans(std::string_view text) {
  if (starts_with_nocase(text, 0, "postgresql://") || starts_with_nocase(text, 0, "postgres://")) {
    return std::nullopt;
  }
  std::vector<Span> spans;
  size_t position = 0;
  auto skip_space = [&] {
    while (position < text.size() && is_space(text[position])) ++position;
  };
  for (;;) {
    skip_space();
    if (position == text.size()) return spans;
    const size_t keyword_start = position;
    while (position < text.size() && !is_space(text[position]) && text[position] != '=') {
      ++position;
    }
    const std::string_view keyword = text.substr(keyword_start, position - keyword_start);
    skip_space();
    if (position == text.size() || text[position] != '=') return std::nullopt;
    ++position;
    skip_space();
    const size_t value_start = position;
    const auto value = conninfo_value_end(text, position);
    if (!value.closed) return std::nullopt;  // an unterminated quote: libpq refuses the string
    position = value.end;
    // libpq's secret keywords, and anything else that says it is a password ("PASSWORD=",
    // which libpq refuses but a user meant).
    const auto& secrets = secret_keywords();
    const bool secret = std::find(secrets.begin(), secrets.end(), keyword) != secrets.end() ||
                        contains_nocase(keyword, "password");
    if (secret && position > value_start) spans.push_back({value_start, position});
  }
}

// In free text: `password = VALUE` and `sslpassword=VALUE` in keyword syntax, and
// `?password=VALUE` or `&password=VALUE` in a URI's query: the value up to the next parameter,
// white space included (libpq keeps a raw space there), so a query that ends a line masks the
// line's rest.
void add_keyword_spans(std::string_view text, std::vector<Span>& spans) {
  constexpr std::string_view kKeyword = "password";
  for (size_t found = 0; found + kKeyword.size() <= text.size(); ++found) {
    if (!starts_with_nocase(text, found, kKeyword)) continue;
    size_t value = found + kKeyword.size();
    while (value < text.size() && is_space(text[value])) ++value;
    if (value == text.size() || text[value] != '=') continue;
    ++value;
    const size_t keyword_start =
        found >= 3 && starts_with_nocase(text, found - 3, "ssl") ? found - 3 : found;
    const bool in_query =
        keyword_start > 0 && (text[keyword_start - 1] == '?' || text[keyword_start - 1] == '&');
    size_t end = value;
    if (in_query) {
      while (end < text.size() && text[end] != '&' && text[end] != '\n') ++end;
    } else {
      while (value < text.size() && is_space(text[value])) ++value;
      end = conninfo_value_end(text, value).end;
    }
    if (end > value) spans.push_back({value, end});
    found = std::max(found, end - 1);
  }
}

// The password in a URI's user info, `postgresql://user:PASSWORD@host`. libpq ends the user
// info at the first '@' before any '/'; a password with a raw '@' (or one cut short by a
// message) is masked up to the last '@' before the path, and white space does not end it.
void add_uri_spans(std::string_view text, std::vector<Span>& spans) {
  for (size_t found = 0; found < text.size(); ++found) {
    size_t authority = 0;
    if (starts_with_nocase(text, found, "postgresql://")) {
      authority = found + 13;
    } else if (starts_with_nocase(text, found, "postgres://")) {
      authority = found + 11;
    } else {
      continue;
    }
    const size_t path = std::min(text.find_first_of("/\n", authority), text.size());
    const std::string_view host_part = text.substr(authority, path - authority);
    const size_t first_at = host_part.find('@');
    const size_t colon = host_part.find(':');
    if (first_at != std::string_view::npos && colon < first_at) {
      spans.push_back({authority + colon + 1, authority + host_part.rfind('@')});
    }
    found = path - 1;
  }
}

// Every secret in a text, sorted, overlaps merged.
std::vector<Span> secret_spans(std::string_view text) {
  // A connection string alone is read as libpq reads it: only its secret values.
  auto keyword_syntax = keyword_syntax_spans(text);
  std::vector<Span> spans = keyword_syntax.value_or(std::vector<Span>{});
  if (!keyword_syntax) add_keyword_spans(text, spans);
  // URIs wherever they are, also as the value of an option (`--results-dsn=postgresql://...`).
  add_uri_spans(text, spans);
  std::sort(spans.begin(), spans.end(),
            [](const Span& left, const Span& right) { return left.begin < right.begin; });
  std::vector<Span> merged;
  for (const Span& span : spans) {
    if (!merged.empty() && span.begin <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, span.end);
    } else {
      merged.push_back(span);
    }
  }
  return merged;
}

}  // namespace

std::string mask_secrets(std::string_view text) {
  std::string masked;
  size_t copied = 0;
  for (const Span& span : secret_spans(text)) {
    masked.append(text.substr(copied, span.begin - copied));
    masked.append(kMask);
    copied = span.end;
  }
  masked.append(text.substr(copied));
  return masked;
}

void mask_secrets_in_place(std::span<char> text) {
  const std::string_view view(text.data(), text.size());
  for (const Span& span : secret_spans(view)) {
    std::fill(text.begin() + static_cast<std::ptrdiff_t>(span.begin),
              text.begin() + static_cast<std::ptrdiff_t>(span.end), '*');
  }
  // libpq is the judge: whatever it would still read as a password is hidden whole.
  const auto options = parse_conninfo(std::string(view));
  if (!options) return;
  for (const PQconninfoOption* option = options.get(); option->keyword != nullptr; ++option) {
    if (option->val == nullptr || !is_secret(*option)) continue;
    if (std::string_view(option->val).find_first_not_of('*') != std::string_view::npos) {
      std::fill(text.begin(), text.end(), '*');
      return;
    }
  }
}

std::string mask_password(const std::string& conninfo) {
  const auto options = parse_conninfo(conninfo);
  // Not a connection string libpq reads (a malformed URI, say): its error will quote it, so
  // it is masked as text.
  if (!options) return mask_secrets(conninfo);
  // Nothing to hide: the user's own spelling.
  if (!has_secret(options.get())) return conninfo;
  std::string masked;
  for (const PQconninfoOption* option = options.get(); option->keyword != nullptr; ++option) {
    if (option->val == nullptr) continue;
    if (!masked.empty()) masked += ' ';
    masked += is_secret(*option) ? fmt::format("{}={}", option->keyword, kMask)
                                 : conninfo_pair(option->keyword, option->val);
  }
  return masked;
}

std::string quote_literal(std::string_view value) {
  const bool backslash = value.find('\\') != std::string_view::npos;
  std::string quoted = backslash ? "E'" : "'";
  for (const char character : value) {
    if (character == '\'' || character == '\\') quoted += character;
    quoted += character;
  }
  return quoted + "'";
}

ConninfoWithoutPassword split_password(const std::string& conninfo) {
  if (conninfo.empty()) return {};
  const auto options = parse_conninfo(conninfo);
  if (!options) return {conninfo, ""};
  ConninfoWithoutPassword split;
  for (const PQconninfoOption* option = options.get(); option->keyword != nullptr; ++option) {
    if (option->val == nullptr) continue;
    if (std::string_view(option->keyword) == "password") {
      split.password = option->val;
      continue;
    }
    if (!split.conninfo.empty()) split.conninfo += ' ';
    split.conninfo += conninfo_pair(option->keyword, option->val);
  }
  // Without a password there is nothing to hide: keep the user's own spelling of the string.
  if (split.password.empty()) split.conninfo = conninfo;
  return split;
}

}  // namespace pgwaitprof::collectors
