// Parses pgbench's output (progress lines on stderr, the summary on stdout, aborted clients on
// stderr) into the model. Pure functions on strings so every pgbench version's format can be
// tested on captured text; the run orchestrator does the I/O.
#include "loadgen/pgbench_parser.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <system_error>
#include <vector>

namespace pgwaitprof::loadgen {
namespace {

// pgbench writes numbers with printf in the C locale; std::from_chars reads exactly that
// grammar ("-nan" and "inf" included) whatever the process locale is, where strtod would
// stop at the '.' under a locale with a decimal comma.
std::optional<double> to_double(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::optional<uint64_t> to_count(std::string_view text) {
  if (text.empty()) return std::nullopt;
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::optional<int> to_int(std::string_view text) {
  if (text.empty()) return std::nullopt;
  int value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

bool consume_prefix(std::string_view& text, std::string_view prefix) {
  if (!text.starts_with(prefix)) return false;
  text.remove_prefix(prefix.size());
  return true;
}

bool consume_suffix(std::string_view& text, std::string_view suffix) {
  if (!text.ends_with(suffix)) return false;
  text.remove_suffix(suffix.size());
  return true;
}

// The text up to the first space (or all of it), removed from `text`.
std::string_view take_word(std::string_view& text) {
  const size_t space = text.find(' ');
  const std::string_view word = text.substr(0, space);
  text.remove_prefix(space == std::string_view::npos ? text.size() : space);
  return word;
}

// Calls `visit` for each line, without its "\n" or a "\r" left by a CRLF pipe.
template <typename Visit>
void for_each_line(std::string_view text, Visit&& visit) {
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    visit(line);
  }
}

// One ", "-separated item after the mandatory "lat X ms stddev Y" of a progress line. The
// order is fixed by pgbench.c, but matching each item on its own keeps the parser short and
// covers PG 13/14 (no "failed") and PG 15+ alike.
bool apply_progress_item(std::string_view item, model::LoadgenProgress& progress) {
  if (consume_prefix(item, "lag ")) {
    if (!consume_suffix(item, " ms")) return false;
    progress.lag = std::optional<base::Milliseconds>(to_double(item));
    return progress.lag.has_value();
  }
  const std::string_view number = take_word(item);
  const std::optional<uint64_t> count = to_count(number);
  if (!count) return false;
  if (item == " failed") {
    progress.failed = *count;
  } else if (item == " skipped") {
    progress.skipped = *count;
  } else if (item != " retried" && item != " retries") {
    // Retries are known from the summary; the model keeps failures only. Anything else is
    // not a line we understand: better no point on the timeline than a wrong one.
    return false;
  }
  return true;
}

// "client 3 aborted ..." (all versions) or "client 3 script 0 aborted ..." (PG 15+).
bool is_aborted_client_line(std::string_view line) {
  if (!consume_prefix(line, "client ")) return false;
  if (!to_int(take_word(line))) return false;
  if (consume_prefix(line, " script ")) {
    if (!to_int(take_word(line))) return false;
  }
  return line.starts_with(" aborted");
}

// pgbench 12+ logs through pg_log_error ("pgbench: error: "); 11 and older wrote bare lines.
std::string_view strip_log_prefix(std::string_view line) {
  if (consume_prefix(line, "pgbench: ")) consume_prefix(line, "error: ");
  return line;
}

[[noreturn]] void fail(const std::string& what) {
  throw PgbenchParseError("could not parse pgbench output: " + what);
}

// The number at the start of a summary value, which may be followed by a unit or a remark
// ("0.915 ms", "187 (0.917%)", "10879/10879", "2180.759046 (without initial connection time)").
double summary_number(std::string_view field, std::string_view value) {
  const size_t end = value.find_first_of(" /");
  const std::optional<double> number = to_double(value.substr(0, end));
  if (!number) fail("invalid " + std::string(field) + " \"" + std::string(value) + "\"");
  return *number;
}

uint64_t summary_count(std::string_view field, std::string_view value) {
  const size_t end = value.find_first_of(" /");
  const std::optional<uint64_t> count = to_count(value.substr(0, end));
  if (!count) fail("invalid " + std::string(field) + " \"" + std::string(value) + "\"");
  return *count;
}

int summary_int(std::string_view field, std::string_view value) {
  const std::optional<int> number = to_int(value);
  if (!number) fail("invalid " + std::string(field) + " \"" + std::string(value) + "\"");
  return *number;
}

// One of the summary's lines of the run's settings, counts and latency, read into `summary`;
// false for any other line.
bool read_summary_field(std::string_view value, model::LoadgenSummary& summary) {
  if (consume_prefix(value, "transaction type: ")) {
    summary.transaction_type = std::string(value);
  } else if (consume_prefix(value, "scaling factor: ")) {
    summary.scale = summary_number("scaling factor", value);
  } else if (consume_prefix(value, "query mode: ")) {
    summary.query_mode = std::string(value);
  } else if (consume_prefix(value, "number of clients: ")) {
    summary.clients = summary_int("number of clients", value);
  } else if (consume_prefix(value, "number of threads: ")) {
    summary.threads = summary_int("number of threads", value);
  } else if (consume_prefix(value, "duration: ")) {
    if (!consume_suffix(value, " s")) fail("invalid duration \"" + std::string(value) + "\"");
    summary.duration = base::Seconds(summary_number("duration", value));
  } else if (consume_prefix(value, "number of transactions actually processed: ")) {
    summary.transactions = summary_count("number of transactions", value);
  } else if (consume_prefix(value, "number of failed transactions: ")) {
    summary.failed = summary_count("number of failed transactions", value);
  } else if (consume_prefix(value, "latency average = ")) {
    summary.latency_avg = base::Milliseconds(summary_number("latency average", value));
  } else if (consume_prefix(value, "latency stddev = ")) {
    summary.latency_stddev = base::Milliseconds(summary_number("latency stddev", value));
  } else if (consume_prefix(value, "initial connection time = ")) {
    summary.initial_connection_time =
        base::Milliseconds(summary_number("initial connection time", value));
  } else {
    return false;
  }
  return true;
}

}  // namespace

std::optional<model::LoadgenProgress> parse_progress_line(std::string_view line) {
  while (line.ends_with('\r') || line.ends_with('\n')) line.remove_suffix(1);
  if (!consume_prefix(line, "progress: ")) return std::nullopt;

  model::LoadgenProgress progress;
  std::optional<double> elapsed_s = to_double(take_word(line));
  if (!elapsed_s || !std::isfinite(*elapsed_s) || *elapsed_s < 0) return std::nullopt;
  progress.elapsed = base::Seconds(*elapsed_s);
  if (!consume_prefix(line, " s, ")) return std::nullopt;

  std::optional<double> tps = to_double(take_word(line));
  if (!tps || !std::isfinite(*tps) || *tps < 0) return std::nullopt;
  progress.tps = *tps;
  if (!consume_prefix(line, " tps, lat ")) return std::nullopt;

  // Before PG 13 an interval without transactions divided by zero and printed "-nan";
  // from_chars reads that as NaN, which is what the model wants.
  std::optional<double> latency_ms = to_double(take_word(line));
  if (!latency_ms) return std::nullopt;
  progress.latency_avg = base::Milliseconds(*latency_ms);
  if (!consume_prefix(line, " ms stddev ")) return std::nullopt;

  const size_t comma = line.find(',');
  std::optional<double> stddev_ms = to_double(line.substr(0, comma));
  if (!stddev_ms) return std::nullopt;
  progress.latency_stddev = base::Milliseconds(*stddev_ms);
  line.remove_prefix(comma == std::string_view::npos ? line.size() : comma);

  while (!line.empty()) {
    if (!consume_prefix(line, ", ")) return std::nullopt;
    const size_t next = line.find(',');
    if (!apply_progress_item(line.substr(0, next), progress)) return std::nullopt;
    line.remove_prefix(next == std::string_view::npos ? line.size() : next);
  }
  return progress;
}

model::LoadgenSummary parse_summary(std::string_view output) {
  model::LoadgenSummary summary;
  // pgbench 13 and older print two tps lines; the one without connection setup is the
  // throughput everyone quotes, so it wins over "including connections establishing".
  std::optional<double> tps_without_connections;
  std::optional<double> tps_other;

  for_each_line(output, [&](std::string_view line) {
    // Per-script sections (" - latency average = ...") are indented, so matching fields at
    // the start of the line reads only the run's totals.
    std::string_view value = line;
    if (read_summary_field(value, summary)) return;
    if (consume_prefix(value, "tps = ")) {
      const double tps = summary_number("tps", value);
      if (value.ends_with("(without initial connection time)") ||
          value.ends_with("(excluding connections establishing)")) {
        tps_without_connections = tps;
      } else {
        // "(including connections establishing)" before PG 14, and with -C the only one:
        // "(including reconnection times)".
        tps_other = tps;
      }
    } else {
      const std::string_view message = strip_log_prefix(line);
      if (is_aborted_client_line(message)) summary.aborted.emplace_back(message);
    }
  });

  if (!tps_without_connections && !tps_other) {
    // pgbench prints no tps when it ran no transaction, e.g. every client aborted, or its
    // clients' connections took the whole duration on a loaded machine.
    if (summary.transactions == 0 && summary.duration) {
      fail(fmt::format("pgbench processed no transaction in its {:g} s, so it gave no tps",
                       summary.duration->count()));
    }
    fail("no \"tps =\" line found");
  }
  summary.tps = tps_without_connections ? *tps_without_connections : *tps_other;
  return summary;
}

std::vector<std::string> aborted_clients(std::string_view stderr_text) {
  std::vector<std::string> aborted;
  for_each_line(stderr_text, [&](std::string_view line) {
    const std::string_view message = strip_log_prefix(line);
    if (is_aborted_client_line(message)) aborted.emplace_back(message);
  });
  return aborted;
}

}  // namespace pgwaitprof::loadgen
