// Classification of backends into wait keys.
#include "model/wait_key.h"

#include <algorithm>
#include <functional>
#include <mutex>
#include <unordered_set>

#include "base/same_text.h"

namespace pgwaitprof::model {

std::string_view state_class(std::string_view state) {
  if (state.empty()) return "background";
  if (state == "fastpath function call") return "active";
  if (state.starts_with("idle in transaction")) return "idle in transaction";
  return state;  // active, idle, disabled
}

namespace {

// A wait key's four parts, borrowed from the backend they describe.
struct KeyView {
  std::string_view backend_type, state, wait_event_type, wait_event;
};

KeyView key_view(const BackendSample& backend) {
  KeyView view{backend.backend_type, state_class(backend.state), backend.wait_event_type,
               backend.wait_event};
  if (view.wait_event_type.empty()) {
    // No wait event: running on a CPU or waiting for one, unless the kernel says it sleeps
    // where PostgreSQL names no wait (page faults, kernel I/O, a sleep outside the wait API).
    if (backend.kernel_state == 'D') {
      view.wait_event_type = kKernel;
      view.wait_event = kKernelUninterruptible;
    } else if (backend.kernel_state == 'S') {
      view.wait_event_type = kKernel;
      view.wait_event = kKernelSleeping;
    } else {
      view.wait_event_type = kCpu;
      view.wait_event = kCpu;
    }
  }
  return view;
}

WaitKey owned(const KeyView& view) {
  return {std::string(view.backend_type), std::string(view.state),
          std::string(view.wait_event_type), std::string(view.wait_event)};
}

KeyView key_view(const WaitKey& key) {
  return {key.backend_type, key.state, key.wait_event_type, key.wait_event};
}

struct KeyHash {
  using is_transparent = void;
  size_t operator()(const KeyView& view) const {
    const std::hash<std::string_view> hash;
    size_t seed = hash(view.backend_type);
    for (const auto part : {view.state, view.wait_event_type, view.wait_event}) {
      seed ^= hash(part) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
    }
    return seed;
  }
  size_t operator()(const WaitKey& key) const { return (*this)(key_view(key)); }
};

struct KeyEqual {
  using is_transparent = void;
  static bool equal(const KeyView& a, const KeyView& b) {
    return base::same_text(a.wait_event, b.wait_event) &&
           base::same_text(a.wait_event_type, b.wait_event_type) &&
           base::same_text(a.state, b.state) && base::same_text(a.backend_type, b.backend_type);
  }
  bool operator()(const KeyView& a, const WaitKey& b) const { return equal(a, key_view(b)); }
  bool operator()(const WaitKey& a, const KeyView& b) const { return equal(key_view(a), b); }
  bool operator()(const WaitKey& a, const WaitKey& b) const { return a == b; }
};

}  // namespace

std::optional<WaitKey> classify(const BackendSample& backend) {
  if (backend.hidden) return std::nullopt;
  return owned(key_view(backend));
}

namespace {

const WaitKey* intern_view(const KeyView& view) {
  // Never destroyed: the keys outlive every sink that holds a pointer to one.
  static auto* const keys = new std::unordered_set<WaitKey, KeyHash, KeyEqual>();
  static std::mutex mutex;
  const std::lock_guard lock(mutex);
  if (const auto found = keys->find(view); found != keys->end()) return &*found;
  // Element addresses of an unordered_set survive rehashing.
  return &*keys->insert(owned(view)).first;
}

}  // namespace

const WaitKey* intern_key(const BackendSample& backend) {
  if (backend.hidden) return nullptr;
  return intern_view(key_view(backend));
}

const WaitKey* intern_key(const WaitKey& key) { return intern_view(key_view(key)); }

void assign_keys(Snapshot& snapshot) {
  // Rows of one key often follow each other (a thousand sessions in one sleep): comparing with
  // the last key is cheaper than hashing and locking again.
  const WaitKey* last = nullptr;
  for (auto& backend : snapshot.backends) {
    if (last != nullptr && !backend.hidden && KeyEqual::equal(key_view(backend), key_view(*last))) {
      backend.key = last;
      continue;
    }
    backend.key = intern_key(backend);
    if (backend.key != nullptr) last = backend.key;
  }
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

bool wait_class_before(std::string_view a, std::string_view b) {
  const auto rank = [](std::string_view wait_class) {
    return std::find(kWaitClassOrder.begin(), kWaitClassOrder.end(), wait_class) -
           kWaitClassOrder.begin();
  };
  const auto rank_a = rank(a);
  const auto rank_b = rank(b);
  return rank_a != rank_b ? rank_a < rank_b : a < b;
}

}  // namespace pgwaitprof::model
