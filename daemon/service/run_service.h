// What the control server needs of the daemon: whether it can take a run now, and running it.
// A small interface so the control server depends on neither the daemon's wiring nor its config.
#pragma once

#include <asio/awaitable.hpp>
#include <optional>
#include <string>

#include "base/run_control.h"
#include "daemon/engine/run_engine.h"

namespace pgwaitprof::service {

struct Refusal {
  std::string code;  // unknown_target, busy, refused
  std::string message;
};

class RunService {
 public:
  virtual ~RunService() = default;
  // nullopt when `request` can run now (its target is sampled, no run is active on it, its load
  // generator is allowed).
  virtual std::optional<Refusal> admit(const engine::RunRequest& request) = 0;
  virtual asio::awaitable<engine::RunOutcome> execute(engine::RunRequest request,
                                                      base::RunControl& control,
                                                      engine::RunObserver& observer) = 0;
};

}  // namespace pgwaitprof::service
