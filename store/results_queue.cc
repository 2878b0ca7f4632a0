// Reading runs back from the results database, and the upload queue of the data directory.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <utility>

#include "store/atomic_file.h"
#include "store/results_db.h"
#include "store/run_directory.h"
#include "store/run_index.h"

namespace pgwaitprof::store {
namespace {

namespace fs = std::filesystem;

// The stored summary, or the report where it is of another version (schema 1 stored none).
constexpr const char* kList = R"sql(
SELECT summary::text, CASE WHEN summary_version = $1::integer THEN NULL ELSE report::text END,
  coalesce(origin_dir, ''), coalesce((SELECT string_agg(matrix, ',' ORDER BY matrix)
                                      FROM pgwaitprof.matrix_runs m WHERE m.run_id = r.run_id), '')
FROM pgwaitprof.runs r
)sql";

RunSummary summary_of_row(const PGresult* result, int row) {
  using collectors::cell;
  RunSummary summary =
      PQgetisnull(result, row, 1)
          ? summary_from_json(nlohmann::json::parse(cell(result, row, 0)))
          : summarize(model::run_from_json(nlohmann::json::parse(cell(result, row, 1))),
                      cell(result, row, 2));
  // A run of schema 1 has no directory to tell its matrix by: matrix_runs does.
  if (summary.matrix.empty()) summary.matrix = cell(result, row, 3);
  return summary;
}

fs::path queue_dir(const fs::path& data_dir) { return data_dir / "results-pending"; }

// An exclusive flock on <data_dir>/results-pending.lock, held while a push reads and empties
// the queue; the kernel drops it when the process ends.
class QueueLock {
 public:
  static base::Expected<QueueLock> take(const fs::path& data_dir) {
    const auto path = data_dir / "results-pending.lock";
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
      return base::Error{
          fmt::format("could not open lock file \"{}\": {}", path.string(), std::strerror(errno))};
    }
    QueueLock lock(fd);
    while (::flock(fd, LOCK_EX) != 0) {
      if (errno != EINTR) {
        return base::Error{
            fmt::format("could not lock file \"{}\": {}", path.string(), std::strerror(errno))};
      }
    }
    return lock;
  }
  QueueLock(QueueLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  QueueLock& operator=(QueueLock&&) = delete;
  ~QueueLock() {
    if (fd_ >= 0) ::close(fd_);
  }

 private:
  explicit QueueLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace

base::Expected<std::vector<RunSummary>> ResultsDb::list(const RunFilter& filter) {
  auto result = exec(kList, {std::to_string(kSummaryVersion)});
  if (!result) return result.error();
  std::vector<RunSummary> runs;
  for (int row = 0; row < PQntuples(result->get()); ++row) {
    RunSummary summary;
    try {
      summary = summary_of_row(result->get(), row);
    } catch (const std::exception& error) {
      return base::Error{
          fmt::format("could not read a run of the results database: {}", error.what())};
    }
    if (filter.matches(summary)) runs.push_back(std::move(summary));
  }
  std::sort(runs.begin(), runs.end(), newer_first);
  return runs;
}

base::Expected<std::set<std::string>> ResultsDb::run_ids() {
  auto result = exec("SELECT run_id FROM pgwaitprof.runs");
  if (!result) return result.error();
  std::set<std::string> ids;
  for (int row = 0; row < PQntuples(result->get()); ++row) {
    ids.insert(collectors::cell(result->get(), row, 0));
  }
  return ids;
}

base::Expected<model::Run> ResultsDb::report(const std::string& run_id) {
  auto result = exec("SELECT report::text FROM pgwaitprof.runs WHERE run_id = $1", {run_id});
  if (!result) return result.error();
  if (PQntuples(result->get()) == 0) {
    return base::Error{fmt::format("no run \"{}\" in the results database", run_id)};
  }
  try {
    return model::run_from_json(nlohmann::json::parse(collectors::cell(result->get(), 0, 0)));
  } catch (const std::exception& error) {
    return base::Error{
        fmt::format("could not read the report of run {}: {}", run_id, error.what())};
  }
}

base::Status queue_upload(const fs::path& data_dir, const fs::path& run_dir) {
  if (auto failed = store::create_private_directories(queue_dir(data_dir))) return failed;
  const auto id = run_dir.lexically_normal().filename().string();
  return store::write_file_atomically(queue_dir(data_dir) / id,
                                      fs::absolute(run_dir).lexically_normal().string() + "\n");
}

namespace {

PushResult failed_push(std::string error) {
  PushResult result;
  result.error = std::move(error);
  return result;
}

// The queue's entries, oldest name first.
std::vector<fs::path> queued_entries(const fs::path& data_dir) {
  std::vector<fs::path> queued;
  std::error_code error;
  for (fs::directory_iterator it(queue_dir(data_dir), error), end; !error && it != end;
       it.increment(error)) {
    if (it->is_regular_file() && it->path().filename().string().front() != '.') {
      queued.push_back(it->path());
    }
  }
  std::sort(queued.begin(), queued.end());
  return queued;
}

// Connected and migrated, as every push is.
base::Expected<ResultsDb> connect_migrated(const std::string& dsn) {
  auto db = ResultsDb::connect(dsn);
  if (!db) return db.error();
  if (auto migrated = db->migrate(); !migrated) return migrated.error();
  return db;
}

// Pushes the queue; the caller holds its lock. `db` is connected when the queue is not empty.
PushResult push_locked(const fs::path& data_dir, const std::string& dsn, RenderRun report_json,
                       std::optional<ResultsDb> db = std::nullopt) {
  PushResult result;
  const auto queued = queued_entries(data_dir);
  result.pending = queued.size();
  if (queued.empty()) return result;
  if (!db) {
    auto connected = connect_migrated(dsn);
    if (!connected) {
      result.error = connected.error().message;
      return result;
    }
    db.emplace(std::move(*connected));
  }
  std::error_code error;
  for (const auto& entry : queued) {
    std::ifstream file(entry);
    if (!file) {  // taken by a push that does not lock (an older pgwaitprof)
      --result.pending;
      continue;
    }
    std::string dir;
    std::getline(file >> std::ws, dir);
    auto run = store::read_run(dir);
    if (!run) {  // the run directory is gone or broken: nothing left to upload
      fs::remove(entry, error);
      --result.pending;
      if (result.error.empty()) result.error = run.error().message;
      continue;
    }
    // report.json itself (with the summary figures the renderer adds), not only the model's.
    if (auto failed = db->upload(*run, report_json(*run), origin_of(dir))) {
      if (!failed->refused) {
        if (result.error.empty()) result.error = failed->message;
        return result;
      }
      result.refused.push_back(failed->message);  // it never will be uploaded: not kept queued
    } else {
      ++result.uploaded;
    }
    fs::remove(entry, error);
    --result.pending;
  }
  return result;
}

}  // namespace

PushResult push_pending(const fs::path& data_dir, const std::string& dsn, RenderRun report_json) {
  std::error_code error;
  if (!fs::is_directory(queue_dir(data_dir), error)) return {};
  // One push of a queue at a time (two `results push`, or one beside the daemon's): the second
  // waits, then finds what the first left. Without it both took the same entries, and the one
  // that came second read a removed entry as the run directory "".
  auto lock = QueueLock::take(data_dir);
  if (!lock) return failed_push(lock.error().message);
  return push_locked(data_dir, dsn, report_json);
}

PushResult upload_runs(const fs::path& data_dir, const std::vector<fs::path>& run_dirs,
                       const std::string& dsn, RenderRun report_json) {
  for (const auto& dir : run_dirs) {
    if (!fs::exists(dir / "report.json")) continue;
    if (auto failed = queue_upload(data_dir, dir)) return failed_push(failed->message);
  }
  return push_pending(data_dir, dsn, report_json);
}

PushResult backfill(const fs::path& data_dir, const std::string& dsn, RenderRun report_json) {
  auto db = connect_migrated(dsn);
  if (!db) return failed_push(db.error().message);
  std::error_code error;
  if (!fs::is_directory(data_dir, error)) return {};  // no history, no queue
  // The lock before the database is asked what it holds: a push that ran between the question
  // and the queueing had uploaded runs this one then queued again (39 runs uploaded twice).
  auto lock = QueueLock::take(data_dir);
  if (!lock) return failed_push(lock.error().message);
  auto known = db->run_ids();
  if (!known) return failed_push(known.error().message);
  for (const auto& run : load_history(data_dir)) {
    if (known->count(run.id) == 0) {
      if (auto failed = queue_upload(data_dir, run.dir)) return failed_push(failed->message);
    }
  }
  return push_locked(data_dir, dsn, report_json, std::move(*db));
}

}  // namespace pgwaitprof::store
