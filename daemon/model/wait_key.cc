// Classification of backends into wait keys.
#include "daemon/model/wait_key.h"

namespace pgwaitprof::model {

std::string state_class(const std::string& state) {
  if (state.empty()) return "background";
  if (state == "fastpath function call") return "active";
  if (state.starts_with("idle in transaction")) return "idle in transaction";
  return state;  // active, idle, disabled
}

std::optional<WaitKey> classify(const BackendSample& backend) {
  if (backend.hidden) return std::nullopt;
  WaitKey key{backend.backend_type, state_class(backend.state), backend.wait_event_type,
              backend.wait_event};
  if (key.wait_event_type.empty()) {
    // No wait event: running on a CPU or waiting for one, unless the kernel says it sleeps
    // where PostgreSQL names no wait (page faults, kernel I/O, a sleep outside the wait API).
    if (backend.kernel_state == 'D') {
      key.wait_event_type = kKernel;
      key.wait_event = kKernelUninterruptible;
    } else if (backend.kernel_state == 'S') {
      key.wait_event_type = kKernel;
      key.wait_event = kKernelSleeping;
    } else {
      key.wait_event_type = kCpu;
      key.wait_event = kCpu;
    }
  }
  return key;
}

bool is_idle(const WaitKey& key) {
  // A background process (no session state) waiting on Activity, or an extension's worker
  // waiting on Extension, sleeps in its main loop; on Timeout it sleeps on purpose (the
  // checkpointer's CheckpointWriteDelay spreading a checkpoint): no load either way.
  return key.state == "idle" || (key.state == "background" && (key.wait_event_type == "Activity" ||
                                                               key.wait_event_type == "Extension" ||
                                                               key.wait_event_type == "Timeout"));
}

std::string display_name(const WaitKey& key) {
  if (key.wait_event_type == kCpu) return kCpu;
  return key.wait_event_type + " | " + key.wait_event;
}

}  // namespace pgwaitprof::model
