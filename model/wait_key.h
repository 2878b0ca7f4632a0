// The wait key: how one backend in one snapshot is counted. See DESIGN.md "Data model".
#pragma once

#include <array>
#include <compare>
#include <optional>
#include <string>
#include <string_view>

#include "model/sample.h"

namespace pgwaitprof::model {

struct WaitKey {
  std::string backend_type;
  std::string state;            // state class: active, idle, idle in transaction, background
  std::string wait_event_type;  // "CPU" for a backend that runs without waiting
  std::string wait_event;
  auto operator<=>(const WaitKey&) const = default;
};

inline constexpr const char* kCpu = "CPU";
// A backend without a wait event that the kernel reported not running (server on this host).
inline constexpr const char* kKernel = "Kernel";
inline constexpr const char* kKernelUninterruptible = "uninterruptible";
inline constexpr const char* kKernelSleeping = "sleeping (no wait event)";

// The state class of pg_stat_activity.state; background processes have a NULL state.
std::string_view state_class(std::string_view state);

// Hidden backends are not classified: nothing is known about what they do.
std::optional<WaitKey> classify(const BackendSample& backend);

// The wait key of a backend as one shared object per distinct key, for the life of the process
// (there are a few hundred at most), so that sinks count by pointer instead of comparing
// strings; null for a hidden backend. Thread-safe; allocates only for a key never seen before.
const WaitKey* intern_key(const BackendSample& backend);
// The same for a key made elsewhere (the traced source's).
const WaitKey* intern_key(const WaitKey& key);
// The key a sampler filed with the backend (BackendSample::key), or intern_key() of it.
inline const WaitKey* key_of(const BackendSample& backend) {
  return backend.key != nullptr ? backend.key : intern_key(backend);
}
// Files intern_key() of every backend in its `key`: once per row, after every snapshot stage.
void assign_keys(Snapshot& snapshot);

// Idle sessions, and background processes sleeping in their main loop (wait type Activity, or
// Extension for extensions' workers such as pg_wait_sampling's collector) or on a deliberate
// delay (Timeout, e.g. CheckpointWriteDelay):
// listed apart in reports and left out of shares, as they are not load.
bool is_idle(const WaitKey& key);

// "type | event" as in the tables posted to pgsql-hackers; "CPU" for CPU.
std::string display_name(const WaitKey& key);

// The wait classes in the order charts stack them (bottom up) and tables list them; classes not
// listed follow, by name (wait_class_before).
inline constexpr std::array<std::string_view, 10> kWaitClassOrder = {
    "CPU",    "LWLock",  "Lock",      "IO",        "IPC",
    "Client", "Timeout", "BufferPin", "Extension", "Activity"};
bool wait_class_before(std::string_view a, std::string_view b);

}  // namespace pgwaitprof::model
