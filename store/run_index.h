// The run history of a data directory: every run directory under <data_dir>/runs/ and
// <data_dir>/matrix/*/runs/, summarised in an index file (<data_dir>/runs-index.json). The index
// is only a cache: an entry is read again from report.json when the report changed (its
// modification time), entries of deleted run directories are dropped, and a missing or
// unreadable index is rebuilt. Run directories without report.json (a run in progress) are left
// out.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "base/expected.h"
#include "store/run_filter.h"
#include "store/run_summary.h"

namespace pgwaitprof::store {

// The run directories of the data directory, in no particular order.
std::vector<std::filesystem::path> find_run_directories(const std::filesystem::path& data_dir);

// The run directories of one matrix directory (its runs/).
std::vector<std::filesystem::path> find_run_directories_of_matrix(
    const std::filesystem::path& matrix_dir);

// The largest report.json the history reads. Parsing takes about eight times its size in memory
// (a report of 200 MB took 14 s and 1.65 GB); at some 5 KB per timeline interval this is more
// than two hours of a run at 1 s intervals. A larger one is left out with a warning; `report`
// and `compare` still read it.
inline constexpr std::uintmax_t kMaxHistoryReportBytes = std::uintmax_t{64} * 1024 * 1024;

struct IndexStats {
  size_t runs = 0;
  size_t read = 0;        // reports parsed because their entry was missing or stale
  size_t unreadable = 0;  // reports that could not be read (left out, with a warning)
  bool written = false;   // the index file was (re)written
};

// Every run of the data directory, newest first (by started_at, then id). Reports that cannot
// be read, or are larger than kMaxHistoryReportBytes, are left out, each with a one-line
// warning on `warnings`.
std::vector<RunSummary> load_history(const std::filesystem::path& data_dir,
                                     std::vector<std::string>* warnings = nullptr,
                                     IndexStats* stats = nullptr);

std::filesystem::path index_path(const std::filesystem::path& data_dir);

// The run `key` names among `runs`: its id, a unique id prefix, or its label (the newest run of
// that label). An error names the candidates when the key is ambiguous.
base::Expected<RunSummary> resolve_run(const std::vector<RunSummary>& runs, const std::string& key);

// The runs `key` selects for a comparison side: a filter expression (run_filter.h) selects every
// run it matches, a label every run of the label, an id or unique id prefix its run.
base::Expected<std::vector<RunSummary>> select_runs(const std::vector<RunSummary>& runs,
                                                    const std::string& key);

}  // namespace pgwaitprof::store
