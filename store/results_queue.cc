// Reading runs back from the results database, and the upload queue of the data directory.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "store/atomic_file.h"
#include "store/results_db.h"
#include "store/run_directory.h"
#include "store/run_index.h"

namespace pgwaitprof::store {
namespace {

namespace fs = std::filesystem;

constexpr const char* kList = R"sql(
SELECT run_id, host, label, status, error, workload, variant, clients,
  report ->> 'started_at', duration_s, tps,
  tps_ci95, latency_ms, aas, top_wait, class_aas, server_version, server_version_num, kernel,
  settings, coalesce((SELECT string_agg(matrix, ',') FROM pgwaitprof.matrix_runs m
                      WHERE m.run_id = r.run_id), ''),
  coalesce(report -> 'tags', '{}')
FROM pgwaitprof.runs r ORDER BY started_at DESC NULLS LAST, run_id DESC
)sql";

double number_cell(const PGresult* result, int row, int column) {
  const auto text = collectors::cell(result, row, column);
  return text.empty() ? std::numeric_limits<double>::quiet_NaN() : std::stod(text);
}

RunSummary summary_of_row(const PGresult* result, int row) {
  using collectors::cell;
  RunSummary s;
  s.id = cell(result, row, 0);
  s.host = cell(result, row, 1);
  s.label = cell(result, row, 2);
  s.status = cell(result, row, 3);
  s.error = cell(result, row, 4);
  s.workload = cell(result, row, 5);
  s.variant = cell(result, row, 6);
  s.clients = std::stoi(cell(result, row, 7));
  s.started_at = cell(result, row, 8);
  s.duration_s = number_cell(result, row, 9);
  s.tps = number_cell(result, row, 10);
  s.tps_half_width = number_cell(result, row, 11);
  s.latency_ms = number_cell(result, row, 12);
  s.aas = number_cell(result, row, 13);
  s.top_wait = cell(result, row, 14);
  s.class_aas = nlohmann::json::parse(cell(result, row, 15)).get<std::map<std::string, double>>();
  s.server_version = cell(result, row, 16);
  s.server_version_num = std::stoi(cell(result, row, 17));
  s.kernel = cell(result, row, 18);
  s.settings =
      nlohmann::json::parse(cell(result, row, 19)).get<std::map<std::string, std::string>>();
  s.matrix = cell(result, row, 20);
  s.tags = nlohmann::json::parse(cell(result, row, 21)).get<std::map<std::string, std::string>>();
  return s;
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
  auto result = exec(kList);
  if (!result) return result.error();
  std::vector<RunSummary> runs;
  for (int row = 0; row < PQntuples(result->get()); ++row) {
    auto summary = summary_of_row(result->get(), row);
    if (filter.matches(summary)) runs.push_back(std::move(summary));
  }
  return runs;
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

PushResult push_pending(const fs::path& data_dir, const std::string& dsn, RenderRun report_json) {
  PushResult result;
  std::vector<fs::path> queued;
  std::error_code error;
  if (!fs::is_directory(queue_dir(data_dir), error)) return result;
  // One push of a queue at a time (two `results push`, or one beside the daemon's): the second
  // waits, then finds what the first left. Without it both took the same entries, and the one
  // that came second read a removed entry as the run directory "".
  auto lock = QueueLock::take(data_dir);
  if (!lock) {
    result.error = lock.error().message;
    return result;
  }
  for (fs::directory_iterator it(queue_dir(data_dir), error), end; !error && it != end;
       it.increment(error)) {
    if (it->is_regular_file() && it->path().filename().string().front() != '.') {
      queued.push_back(it->path());
    }
  }
  std::sort(queued.begin(), queued.end());
  result.pending = queued.size();
  if (queued.empty()) return result;
  auto db = ResultsDb::connect(dsn);
  auto migrated = db ? db->migrate() : base::Expected<int>(db.error());
  if (!migrated) {
    result.error = migrated.error().message;
    return result;
  }
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
    if (auto failed = db->upload(*run, report_json(*run), matrix_of_dir(dir))) {
      if (result.error.empty()) result.error = failed->message;
      return result;
    }
    fs::remove(entry, error);
    --result.pending;
    ++result.uploaded;
  }
  return result;
}

PushResult upload_runs(const fs::path& data_dir, const std::vector<fs::path>& run_dirs,
                       const std::string& dsn, RenderRun report_json) {
  for (const auto& dir : run_dirs) {
    if (!fs::exists(dir / "report.json")) continue;
    if (auto failed = queue_upload(data_dir, dir)) return {0, 0, failed->message};
  }
  return push_pending(data_dir, dsn, report_json);
}

PushResult backfill(const fs::path& data_dir, const std::string& dsn, RenderRun report_json) {
  auto db = ResultsDb::connect(dsn);
  auto migrated = db ? db->migrate() : base::Expected<int>(db.error());
  if (!migrated) return {0, 0, migrated.error().message};
  auto uploaded = db->list(RunFilter{});
  if (!uploaded) return {0, 0, uploaded.error().message};
  std::set<std::string> known;
  for (const auto& run : *uploaded) known.insert(run.id);
  for (const auto& run : load_history(data_dir)) {
    if (known.count(run.id) == 0) {
      if (auto failed = queue_upload(data_dir, run.dir)) return {0, 0, failed->message};
    }
  }
  return push_pending(data_dir, dsn, report_json);
}

}  // namespace pgwaitprof::store
