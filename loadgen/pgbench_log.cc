// pgbench per-transaction log parsing and the streaming per-interval latency reader. The line
// format follows doLog() in src/bin/pgbench/pgbench.c of PG 13-17; the reader merges every
// thread's file by end time so that an interval is summarised and its histogram reused as soon
// as no file can still hold a transaction of it.
#include "loadgen/pgbench_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>
#include <queue>
#include <stdexcept>
#include <utility>

namespace pgwaitprof::loadgen {
namespace {

template <typename Integer>
bool parse_unsigned(std::string_view text, Integer& value) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

// Splits on spaces and tabs into at most fields.size() fields; false if there are more.
template <std::size_t N>
bool split_fields(std::string_view line, std::array<std::string_view, N>& fields,
                  std::size_t& count) {
  count = 0;
  std::size_t position = 0;
  while (true) {
    while (position < line.size() && (line[position] == ' ' || line[position] == '\t')) {
      ++position;
    }
    if (position >= line.size()) return true;
    std::size_t end = position;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
    if (count == N) return false;
    fields[count++] = line.substr(position, end - position);
    position = end;
  }
}

std::optional<std::string> value_of(const std::vector<std::string>& args, std::size_t& index,
                                    std::string_view short_flag, std::string_view long_flag) {
  const std::string_view arg = args[index];
  const auto next = [&]() -> std::optional<std::string> {
    if (index + 1 >= args.size()) return std::string();
    return args[++index];
  };
  if (!long_flag.empty()) {
    if (arg == long_flag) return next();
    if (arg.size() > long_flag.size() && arg.starts_with(long_flag) &&
        arg[long_flag.size()] == '=') {
      return std::string(arg.substr(long_flag.size() + 1));
    }
  }
  if (!short_flag.empty() && arg.starts_with(short_flag) && !arg.starts_with("--")) {
    if (arg == short_flag) return next();
    return std::string(arg.substr(short_flag.size()));
  }
  return std::nullopt;
}

// Buffered line reader over a FILE: never holds more than one buffer of the file.
class LineReader {
 public:
  enum class Result { line, incomplete, end };

  LineReader(std::FILE* file, std::size_t capacity) : file_(file), buffer_(capacity) {}

  // The next line without its '\n'. incomplete: the last line has no '\n' (pgbench was
  // stopped while writing it), or a line longer than the buffer (skipped up to its '\n').
  Result next(std::string_view& line) {
    while (true) {
      const char* first = buffer_.data() + begin_;
      const char* newline = static_cast<const char*>(std::memchr(first, '\n', end_ - begin_));
      if (newline != nullptr) {
        const auto length = static_cast<std::size_t>(newline - first);
        begin_ += length + 1;
        if (discarding_) {
          discarding_ = false;
          continue;
        }
        line = std::string_view(first, length);
        return Result::line;
      }
      if (eof_) {
        if (begin_ == end_) return Result::end;
        line = std::string_view(first, end_ - begin_);
        begin_ = end_;
        if (discarding_) return Result::end;
        return Result::incomplete;
      }
      if (begin_ == 0 && end_ == buffer_.size()) {
        // A line longer than the buffer is not a pgbench line: drop it up to its '\n'.
        const bool first_chunk = !discarding_;
        discarding_ = true;
        begin_ = end_ = 0;
        if (first_chunk) {
          line = std::string_view();
          return Result::incomplete;
        }
      }
      fill();
    }
  }

  bool failed() const { return std::ferror(file_) != 0; }

 private:
  void fill() {
    if (begin_ > 0) {
      std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    const std::size_t got = std::fread(buffer_.data() + end_, 1, buffer_.size() - end_, file_);
    end_ += got;
    if (got == 0) eof_ = true;
  }

  std::FILE* file_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  bool eof_ = false;
  bool discarding_ = false;
};

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
using FileHandle = std::unique_ptr<std::FILE, FileCloser>;

// One thread's log, positioned on its next parsable transaction.
struct LogStream {
  std::filesystem::path path;
  FileHandle file;
  std::unique_ptr<LineReader> reader;
  LoggedTransaction head;
};

// Per-interval aggregation over a window of open intervals. Transactions arrive in end-time
// order (the k-way merge); the window tolerates a file going back by window - 1 intervals.
class TimelineBuilder {
 public:
  static constexpr std::size_t kWindow = 4;

  explicit TimelineBuilder(const LatencyTimelineOptions& options) : options_(options) {
    timeline_.start = options.start;
    timeline_.interval = options.interval;
    timeline_.sampling_rate = options.sampling_rate;
    start_us_ =
        std::chrono::duration_cast<std::chrono::microseconds>(options.start.time_since_epoch())
            .count();
  }

  model::LatencyTimeline& timeline() { return timeline_; }

  void add(const LoggedTransaction& transaction) {
    count(run_, run_histogram_, transaction);
    const std::int64_t offset_us = transaction.end.time_since_epoch().count() - start_us_;
    if (offset_us < 0) {
      ++timeline_.outside_intervals;
      return;
    }
    const auto index = static_cast<std::size_t>(offset_us / options_.interval.count());
    if (index >= options_.max_intervals || index < lowest_open_) {
      ++timeline_.outside_intervals;
      return;
    }
    while (index >= lowest_open_ + kWindow) close_lowest();
    Slot& slot = slots_[index % kWindow];
    count(slot.counts, slot.histogram, transaction);
    if (!highest_ || index > *highest_) highest_ = index;
  }

  model::LatencyTimeline finish() {
    if (highest_) {
      while (lowest_open_ <= *highest_) close_lowest();
    }
    timeline_.run = model::summarize(run_histogram_);
    copy_counts(run_, timeline_.run);
    return std::move(timeline_);
  }

 private:
  struct Counts {
    std::uint64_t failed = 0;
    std::uint64_t skipped = 0;
    std::uint64_t retries = 0;
  };
  struct Slot {
    model::LatencyHistogram histogram;
    Counts counts;
  };

  static void count(Counts& counts, model::LatencyHistogram& histogram,
                    const LoggedTransaction& transaction) {
    switch (transaction.status) {
      case TransactionStatus::completed:
        histogram.record(transaction.latency);
        break;
      case TransactionStatus::failed:
        ++counts.failed;
        break;
      case TransactionStatus::skipped:
        ++counts.skipped;
        break;
    }
    if (transaction.retries) counts.retries += *transaction.retries;
  }

  static void copy_counts(const Counts& counts, model::LatencySummary& summary) {
    summary.failed = counts.failed;
    summary.skipped = counts.skipped;
    summary.retries = counts.retries;
  }

  void close_lowest() {
    Slot& slot = slots_[lowest_open_ % kWindow];
    model::LatencySummary summary = model::summarize(slot.histogram);
    copy_counts(slot.counts, summary);
    timeline_.intervals.push_back(summary);
    slot.histogram.reset();
    slot.counts = Counts();
    ++lowest_open_;
  }

  const LatencyTimelineOptions& options_;
  model::LatencyTimeline timeline_;
  std::int64_t start_us_ = 0;
  std::array<Slot, kWindow> slots_;
  std::size_t lowest_open_ = 0;  // == timeline_.intervals.size()
  std::optional<std::size_t> highest_;
  model::LatencyHistogram run_histogram_;
  Counts run_;
};

// The log files' streams, each with its reader; a file that cannot be opened is an error of
// the timeline's.
std::vector<LogStream> open_streams(const std::vector<std::filesystem::path>& files,
                                    const LatencyTimelineOptions& options,
                                    model::LatencyTimeline& timeline) {
  std::vector<LogStream> streams;
  streams.reserve(files.size());
  for (const auto& path : files) {
    FileHandle file(std::fopen(path.c_str(), "rb"));
    if (!file) {
      timeline.errors.push_back(fmt::format("could not open file \"{}\": {}", path.string(),
                                            std::generic_category().message(errno)));
      continue;
    }
    auto reader =
        std::make_unique<LineReader>(file.get(), std::max<std::size_t>(options.buffer_bytes, 256));
    streams.push_back({path, std::move(file), std::move(reader), {}});
  }
  return streams;
}

// Moves a stream to its next transaction; false at its end. Lines are counted in the timeline.
bool advance_stream(LogStream& stream, LogColumns columns, model::LatencyTimeline& timeline) {
  std::string_view line;
  while (true) {
    const auto result = stream.reader->next(line);
    if (result == LineReader::Result::end) break;
    ++timeline.lines;
    if (result == LineReader::Result::incomplete) {
      ++timeline.unparsable_lines;
      continue;
    }
    if (auto transaction = parse_log_line(line, columns)) {
      stream.head = *transaction;
      return true;
    }
    ++timeline.unparsable_lines;
  }
  if (stream.reader->failed()) {
    timeline.errors.push_back(fmt::format("could not read file \"{}\"", stream.path.string()));
  }
  return false;
}

}  // namespace

std::optional<LoggedTransaction> parse_log_line(std::string_view line, LogColumns columns) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  std::array<std::string_view, 8> fields;
  std::size_t count = 0;
  if (!split_fields(line, fields, count)) return std::nullopt;
  const std::size_t expected = 6 + (columns.schedule_lag ? 1 : 0) + (columns.retries ? 1 : 0);
  if (count != expected) return std::nullopt;

  LoggedTransaction transaction;
  std::int64_t epoch_s = 0;
  std::int64_t epoch_us = 0;
  if (!parse_unsigned(fields[0], transaction.client) ||
      !parse_unsigned(fields[1], transaction.transaction_no) ||
      !parse_unsigned(fields[3], transaction.script) || !parse_unsigned(fields[4], epoch_s) ||
      !parse_unsigned(fields[5], epoch_us) || epoch_us > 999'999 ||
      epoch_s > std::int64_t{1} << 40) {
    return std::nullopt;
  }
  transaction.end = std::chrono::sys_time<std::chrono::microseconds>(
      std::chrono::seconds(epoch_s) + std::chrono::microseconds(epoch_us));

  const std::string_view time = fields[2];
  if (time == "skipped") {
    transaction.status = TransactionStatus::skipped;
  } else if (time == "failed") {
    transaction.status = TransactionStatus::failed;
    transaction.cause = FailureCause::unspecified;
  } else if (time == "serialization") {
    transaction.status = TransactionStatus::failed;
    transaction.cause = FailureCause::serialization;
  } else if (time == "deadlock") {
    transaction.status = TransactionStatus::failed;
    transaction.cause = FailureCause::deadlock;
  } else if (time == "other") {
    transaction.status = TransactionStatus::failed;
    transaction.cause = FailureCause::other;
  } else {
    std::int64_t latency_us = 0;
    if (!parse_unsigned(time, latency_us)) return std::nullopt;
    transaction.latency = std::chrono::microseconds(latency_us);
  }

  std::size_t next = 6;
  if (columns.schedule_lag) {
    std::int64_t lag_us = 0;
    if (!parse_unsigned(fields[next++], lag_us)) return std::nullopt;
    transaction.schedule_lag = std::chrono::microseconds(lag_us);
  }
  if (columns.retries) {
    std::uint32_t retries = 0;
    if (!parse_unsigned(fields[next++], retries)) return std::nullopt;
    transaction.retries = retries;
  }
  return transaction;
}

PgbenchLogArgs log_args_of(const std::vector<std::string>& pgbench_args) {
  // pgbench's short options that take no argument, which getopt lets one bundle ("-nl").
  constexpr std::string_view kBundlable = "CdlnNqrSv";
  PgbenchLogArgs result;
  for (std::size_t index = 0; index < pgbench_args.size(); ++index) {
    const std::string_view arg = pgbench_args[index];
    if (arg == "--log") {
      result.logging = true;
    } else if (arg.size() >= 2 && arg[0] == '-' && arg[1] != '-' &&
               arg.find_first_not_of(kBundlable, 1) == std::string_view::npos) {
      if (arg.find('l') != std::string_view::npos) result.logging = true;
    } else if (auto prefix = value_of(pgbench_args, index, "", "--log-prefix")) {
      result.log_prefix = *prefix;
    } else if (value_of(pgbench_args, index, "", "--aggregate-interval")) {
      result.aggregated = true;
    } else if (value_of(pgbench_args, index, "-R", "--rate")) {
      result.columns.schedule_lag = true;
    } else if (auto tries = value_of(pgbench_args, index, "", "--max-tries")) {
      int value = 0;
      result.columns.retries = !(parse_unsigned(std::string_view(*tries), value) && value == 1);
    } else if (auto rate = value_of(pgbench_args, index, "", "--sampling-rate")) {
      double value = 0.0;
      const auto [end, error] = std::from_chars(rate->data(), rate->data() + rate->size(), value);
      if (error == std::errc() && end == rate->data() + rate->size() && value > 0.0 &&
          value <= 1.0) {
        result.sampling_rate = value;
      }
    }
  }
  return result;
}

std::optional<PgbenchLogFileName> parse_log_file_name(std::string_view prefix_name,
                                                      std::string_view file_name) {
  if (prefix_name.empty() || file_name.size() <= prefix_name.size() + 1 ||
      !file_name.starts_with(prefix_name) || file_name[prefix_name.size()] != '.') {
    return std::nullopt;
  }
  const std::string_view rest = file_name.substr(prefix_name.size() + 1);
  const auto dot = rest.find('.');
  PgbenchLogFileName name;
  if (!parse_unsigned(rest.substr(0, dot), name.pid)) return std::nullopt;
  if (dot == std::string_view::npos) return name;
  // Thread 0 has no suffix, so ".0" is not pgbench's.
  if (!parse_unsigned(rest.substr(dot + 1), name.thread) || name.thread == 0) return std::nullopt;
  return name;
}

std::vector<PgbenchLogFile> list_log_files(const std::filesystem::path& prefix,
                                           std::error_code& error) {
  error.clear();
  std::vector<PgbenchLogFile> files;
  const std::filesystem::path directory =
      prefix.has_parent_path() ? prefix.parent_path() : std::filesystem::path(".");
  const std::string prefix_name = prefix.filename().string();
  std::filesystem::directory_iterator entries(directory, error);
  if (error) return files;
  for (const auto& entry : entries) {
    std::error_code type_error;
    if (!entry.is_regular_file(type_error)) continue;
    const std::string name = entry.path().filename().string();
    if (auto parsed = parse_log_file_name(prefix_name, name)) {
      files.push_back({entry.path(), parsed->pid, parsed->thread});
    }
  }
  std::sort(files.begin(), files.end(), [](const PgbenchLogFile& a, const PgbenchLogFile& b) {
    return std::pair(a.pid, a.thread) < std::pair(b.pid, b.thread);
  });
  return files;
}

std::vector<std::filesystem::path> paths_of(const std::vector<PgbenchLogFile>& files) {
  std::vector<std::filesystem::path> paths;
  paths.reserve(files.size());
  for (const auto& file : files) paths.push_back(file.path);
  return paths;
}

model::LatencyTimeline read_latency_timeline(const std::vector<std::filesystem::path>& files,
                                             const LatencyTimelineOptions& options) {
  if (options.interval.count() <= 0) {
    throw std::invalid_argument("latency interval must be positive");
  }
  TimelineBuilder builder(options);
  model::LatencyTimeline& timeline = builder.timeline();

  std::vector<LogStream> streams = open_streams(files, options, timeline);
  const auto next = [&](LogStream& stream) {
    return advance_stream(stream, options.columns, timeline);
  };

  // k-way merge by end time: each thread writes its file in completion order.
  const auto later = [&](std::size_t a, std::size_t b) {
    const auto& left = streams[a].head.end;
    const auto& right = streams[b].head.end;
    return left != right ? left > right : a > b;
  };
  std::priority_queue<std::size_t, std::vector<std::size_t>, decltype(later)> queue(later);
  for (std::size_t index = 0; index < streams.size(); ++index) {
    if (next(streams[index])) queue.push(index);
  }
  while (!queue.empty()) {
    const std::size_t index = queue.top();
    queue.pop();
    builder.add(streams[index].head);
    if (next(streams[index])) queue.push(index);
  }
  return builder.finish();
}

}  // namespace pgwaitprof::loadgen
