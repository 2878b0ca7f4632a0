// A matrix sweep's runs aggregated into cells: runs grouped by variant (or variant and a
// recorded environment attribute) and client count, each cell's median and range over repeats,
// median latency, p99 and checkpoint time, dominant wait event, and wait profile (share and AAS
// per wait class and wait event, with errors from the repeats or from a lone run's batch means).
// Numbers only: exporters/render/matrix_table.h renders them.
#pragma once

#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "model/matrix_durations.h"
#include "model/run.h"
#include "model/run_estimates.h"
#include "model/scalability.h"
#include "model/wait_key.h"
#include "model/wait_share.h"

namespace pgwaitprof::model {

// Where a cell's errors come from.
enum class ShareError {
  kNone,      // no completed run with samples
  kSampling,  // one run: its own sampling error
  kRepeats,   // two or more runs: the standard error of the mean of the runs' values
};

struct MatrixCell {
  std::string variant;
  int clients = 0;
  // The table's figure: tps, or the elapsed seconds of fixed-work runs (metric duration); the
  // fields keep their tps names.
  Metric metric = Metric::kTps;
  std::vector<double> tps;  // one per finished repeat
  double tps_median = 0, tps_min = 0, tps_max = 0;
  base::Milliseconds latency_median{0};
  // Median over the runs of their p99 latency (pgbench's transaction log); NaN without one.
  base::Milliseconds p99_median{std::numeric_limits<double>::quiet_NaN()};
  std::string dominant_wait;   // display name of the top non-idle wait key ("CPU" included)
  std::string dominant_class;  // its wait_event_type
  double dominant_share = 0;   // 0..1
  int failed_runs = 0;         // runs not "completed"
  // Median duration of the CHECKPOINT after the runs' load (checkpoint_after); NaN without.
  base::Seconds checkpoint_median{std::numeric_limits<double>::quiet_NaN()};
  // The wait profile of the completed runs. Shares and AAS are means over the runs (each run
  // weighs the same, as each tps does), so they may differ in the last digit from the pooled
  // dominant_share.
  int profile_runs = 0;  // completed runs with snapshots
  ShareError error_source = ShareError::kNone;
  double aas_total = 0;            // non-idle average active sessions, mean over the runs
  std::vector<WaitShare> classes;  // every wait class seen, in kWaitClassOrder
  std::vector<WaitShare> events;   // every non-idle wait event seen, largest share first
  // --cpu-profile: the client backends' functions (self time; "name [kernel]" for the kernel's)
  // by their share of the on-CPU samples, mean over the runs with a profile, largest first;
  // share_error between repeats (NaN with one run), aas the sessions on a CPU it stands for.
  std::vector<WaitShare> functions;
  // Traced runs (--source trace): each wait event's blocking waits a second and durations.
  CellDurations durations;
  const WaitShare* find_class(const std::string& name) const;
  const WaitShare* find_event(const std::string& name) const;
  const WaitShare* find_function(const std::string& name) const;
};

// The build a variant ran on, in a plan of builds (server_bin): its version() as the runs
// recorded it and, where pg_config is beside the server, its configure options.
struct VariantBuild {
  std::string variant;
  std::string server_version;  // version(); "" when no run recorded it
  int major = 0;               // from server_version_num; 0 unknown
  std::string configure;       // pg_config --configure; "" without pg_config
};

struct MatrixTable {
  std::string name;
  Metric metric = Metric::kTps;
  std::string split_by;               // the environment attribute rows are split by, "" for none
  std::vector<std::string> variants;  // in plan order (first appearance)
  std::vector<int> clients;           // ascending
  std::vector<MatrixCell> cells;      // variants x clients, missing cells absent
  // One per variant in plan order, with throughput (metric tps) only: the Universal Scalability
  // Law fit, the knee and the waits that grow across it (model/scalability.h).
  std::vector<VariantScalability> scalability;
  // A plan of builds: one per variant in plan order (empty otherwise); the majors, ascending,
  // when the builds are of more than one.
  std::vector<VariantBuild> builds;
  std::vector<int> mixed_majors;
  const MatrixCell* find(const std::string& variant, int clients) const;
};

// Groups runs by (run.variant, run.clients); with split_by, by (variant and the run's recorded
// attribute, named "variant [kernel 6.1.0]", clients), so hosts or boots are side by side.
MatrixTable build_matrix_table(const std::vector<Run>& runs, std::string name = "",
                               Metric metric = Metric::kTps, const std::string& split_by = "");

// Sets the table's builds and mixed_majors from the runs' recorded server versions, with the
// configure options of each variant's build (by variant name).
void set_builds(MatrixTable& table, const std::vector<Run>& runs,
                const std::map<std::string, std::string>& configure);

// A run's recorded attribute by name: kernel, cpu_model, server_version or label; "" for an
// unknown name.
std::string run_attribute(const Run& run, const std::string& name);

// The name of a variant in a row: "-" for the unnamed variant.
std::string variant_label(const std::string& variant);

// The sampling error of one run's share and AAS of the keys `selected` picks: batch means over
// the run's timeline (NaN when the run is too short): the only place a single run's error
// comes from.
WaitKeyEstimate single_run_error(const Run& run,
                                 const std::function<bool(const WaitKey&)>& selected);

// Sets the cell's profile_runs, error_source, aas_total, classes, events, functions and
// durations from its completed runs (runs without snapshots are left out).
void set_composition(MatrixCell& cell, const std::vector<const Run*>& runs);

// The dominant wait of a pooled profile: the non-idle display name with the most samples (one
// event under several backend types or states counts as one; name order breaks ties), its
// class and its share of the non-idle samples.
void set_dominant(MatrixCell& cell, const Profile& profile);

}  // namespace pgwaitprof::model
