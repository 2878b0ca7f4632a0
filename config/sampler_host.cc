// ssh://[user@]host[:port], checked.
#include "config/sampler_host.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "config/quote.h"

namespace pgwaitprof::config {
namespace {

bool name_characters(std::string_view text, std::string_view extra) {
  return std::all_of(text.begin(), text.end(), [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           extra.find(c) != std::string_view::npos;
  });
}

}  // namespace

std::string SamplerHost::destination() const { return user.empty() ? host : user + "@" + host; }

std::string SamplerHost::text() const {
  const std::string shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return fmt::format("ssh://{}{}{}", user.empty() ? "" : user + "@", shown,
                     port ? fmt::format(":{}", *port) : "");
}

base::Expected<SamplerHost> parse_sampler_host(std::string_view text) {
  auto host = read_sampler_host(text);
  if (host) return host;
  return base::Error{fmt::format("invalid sampler host {}: {}", quote(text), host.error().message)};
}

base::Expected<SamplerHost> read_sampler_host(std::string_view text) {
  auto invalid = [](std::string_view why) { return base::Error{std::string(why)}; };
  constexpr std::string_view kScheme = "ssh://";
  if (!text.starts_with(kScheme)) return invalid("expected ssh://[user@]host[:port]");
  std::string_view rest = text.substr(kScheme.size());
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  SamplerHost host;
  if (const auto at = rest.rfind('@'); at != std::string_view::npos) {
    host.user = std::string(rest.substr(0, at));
    rest = rest.substr(at + 1);
    if (host.user.empty() || host.user.front() == '-' || !name_characters(host.user, "._-")) {
      return invalid("a user name is letters, digits, '.', '_' and '-'");
    }
  }
  std::string_view port;
  if (rest.starts_with('[')) {
    const auto close = rest.find(']');
    if (close == std::string_view::npos) return invalid("an IPv6 address needs its ']'");
    host.host = std::string(rest.substr(1, close - 1));
    rest = rest.substr(close + 1);
    if (!host.host.empty() && !name_characters(host.host, ":.")) {
      return invalid("an IPv6 address is hexadecimal digits and ':'");
    }
    if (rest.starts_with(':'))
      port = rest.substr(1);
    else if (!rest.empty())
      return invalid("expected ssh://[user@]host[:port]");
  } else {
    const auto colon = rest.find(':');
    host.host = std::string(rest.substr(0, colon));
    if (colon != std::string_view::npos) port = rest.substr(colon + 1);
    if (!name_characters(host.host, ".-_")) {
      return invalid("a host is a name or an address (letters, digits, '.', '-' and '_')");
    }
  }
  if (host.host.empty()) return invalid("no host");
  if (host.host.front() == '-') return invalid("a host may not start with '-'");
  if (port.data() != nullptr) {
    int number = 0;
    const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), number);
    if (port.empty() || error != std::errc() || end != port.data() + port.size() || number < 1 ||
        number > 65535) {
      return invalid("the port is a number from 1 to 65535");
    }
    host.port = number;
  }
  return host;
}

}  // namespace pgwaitprof::config
