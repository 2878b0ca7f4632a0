// A run's blocking waits as the traced source (collectors/trace/) measured them over the run's
// steady window, merged per wait name, and the figures read from them per second of the
// window: what compare (compare_traced.cc) and the matrix (matrix_durations.cc) take from a
// traced run, so that both count the same waits the same way.
#pragma once

#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>

#include "model/run.h"
#include "model/traced_time.h"
#include "model/wait_key.h"

namespace pgwaitprof::model {

// Whether a traced key's waits are the load's: the non-idle ones, as in every other part of a
// report. Idle sessions are left out here too: the traced source charges every idle session of
// the server, pgwaitprof's own connection included (an idle ClientRead wait of 0.98 s in a
// 1-client pgbench run), so an idle ClientRead's durations are not the load's round trips; a
// transaction's own round trips are (ClientRead while idle in transaction).
bool load_wait(const WaitKey& key);

// The parts of one wait name: its keys' traced time merged, and its class.
struct NamedWaits {
  TracedTime time;
  std::string wait_class;  // wait_event_type
  std::string label;       // display name, as the run names it
};

struct RunWaits {
  double wall_s = 0;  // the window's wall-clock time (a traced profile's snapshots are us)
  std::map<std::string, NamedWaits> by_name;
};

// The load's traced waits over the run's steady window, by `name_of` their keys; nullopt for
// a run without traced figures there.
std::optional<RunWaits> run_traced_waits(const Run& run,
                                         const std::function<std::string(const WaitKey&)>& name_of);

// One name's figures in one run.
struct WaitFigures {
  double waits_per_s = 0;
  double aas = 0;  // time per second of the window
  // The blocking waits' durations, seconds; NaN without waits.
  double mean_s = std::numeric_limits<double>::quiet_NaN();
  double p50_s = std::numeric_limits<double>::quiet_NaN();
  double p99_s = std::numeric_limits<double>::quiet_NaN();
  double longest_s = std::numeric_limits<double>::quiet_NaN();
};
WaitFigures wait_figures(const TracedTime& time, double wall_s);

}  // namespace pgwaitprof::model
