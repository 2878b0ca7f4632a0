// Basic-auth checks of /metrics: bcrypt through libxcrypt, digests and constant-time
// comparisons through OpenSSL's libcrypto (already there for libpq).
#include "exporters/prometheus/basic_auth.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cctype>
#include <cstring>
#include <stdexcept>

#include "base/logging.h"

namespace pgwaitprof::exporters {
namespace {

// At most one warning a minute about refused checks, however long a flood lasts.
constexpr std::chrono::minutes kWarningInterval{1};

// "$2b$10$..." -> "$2b$" and 10; false for anything else.
bool read_bcrypt_setting(const std::string& hash, std::string& prefix, unsigned long& cost) {
  if (hash.size() < 7 || !hash.starts_with("$2") || hash[3] != '$' || hash[6] != '$' ||
      std::isdigit(static_cast<unsigned char>(hash[4])) == 0 ||
      std::isdigit(static_cast<unsigned char>(hash[5])) == 0) {
    return false;
  }
  prefix = hash.substr(0, 4);
  cost = static_cast<unsigned long>(hash[4] - '0') * 10 + static_cast<unsigned long>(hash[5] - '0');
  return true;
}

}  // namespace

bool password_matches(const std::string& password, const std::string& hash) {
  crypt_data data{};
  const char* computed = ::crypt_r(password.c_str(), hash.c_str(), &data);
  // crypt_r returns "*0"-style failure tokens rather than NULL for a bad setting.
  const bool matches = computed != nullptr && computed[0] != '*' &&
                       std::strlen(computed) == hash.size() &&
                       CRYPTO_memcmp(computed, hash.data(), hash.size()) == 0;
  OPENSSL_cleanse(&data, sizeof data);
  return matches;
}

BasicAuthChecker::BasicAuthChecker(const std::map<std::string, std::string>& users) {
  if (RAND_bytes(key_.data(), static_cast<int>(key_.size())) != 1) {
    throw std::runtime_error("could not generate a key for basic auth");
  }
  for (const auto& [name, hash] : users) {
    std::string prefix;
    unsigned long cost = 0;
    if (!read_bcrypt_setting(hash, prefix, cost)) {
      throw std::runtime_error("basic auth user \"" + name + "\" has no bcrypt hash");
    }
    std::array<unsigned char, 16> salt{};
    std::array<char, CRYPT_GENSALT_OUTPUT_SIZE> setting{};
    if (RAND_bytes(salt.data(), static_cast<int>(salt.size())) != 1 ||
        ::crypt_gensalt_rn(prefix.c_str(), cost, reinterpret_cast<const char*>(salt.data()),
                           static_cast<int>(salt.size()), setting.data(),
                           static_cast<int>(setting.size())) == nullptr) {
      throw std::runtime_error("could not make a dummy bcrypt salt for basic auth user \"" + name +
                               "\"");
    }
    users_.push_back({digest({"user", name}), hash, setting.data()});
  }
  remembered_.reserve(kRememberedCredentials);
}

BasicAuthChecker::~BasicAuthChecker() { OPENSSL_cleanse(key_.data(), key_.size()); }

BasicAuthChecker::Digest BasicAuthChecker::digest(
    std::initializer_list<std::string_view> parts) const {
  std::string message;
  for (const auto part : parts) {
    const uint64_t size = part.size();
    message.append(reinterpret_cast<const char*>(&size), sizeof size);
    message.append(part);
  }
  Digest result{};
  unsigned int length = 0;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), result.data(),
       &length);
  OPENSSL_cleanse(message.data(), message.size());
  return result;
}

bool BasicAuthChecker::remembered(const Digest& credentials) {
  std::lock_guard<std::mutex> lock(remembered_mutex_);
  bool found = false;
  // Every slot is compared, in constant time: the time taken says nothing of which matched.
  for (const Digest& entry : remembered_) {
    found |= CRYPTO_memcmp(entry.data(), credentials.data(), entry.size()) == 0;
  }
  return found;
}

void BasicAuthChecker::remember(const Digest& credentials) {
  std::lock_guard<std::mutex> lock(remembered_mutex_);
  if (remembered_.size() < kRememberedCredentials) {
    remembered_.push_back(credentials);
  } else {
    remembered_[next_slot_] = credentials;
  }
  next_slot_ = (next_slot_ + 1) % kRememberedCredentials;
}

void BasicAuthChecker::note_refused() {
  // Called with turn_mutex_ held.
  ++refused_since_warning_;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_warning_ < kWarningInterval) return;
  base::component_logger("metrics")->warn(
      "basic auth checks refused while the queue was full pending_limit={} refused={}",
      kMaxPendingChecks, refused_since_warning_);
  last_warning_ = now;
  refused_since_warning_ = 0;
}

bool BasicAuthChecker::hash_in_turn(const std::string& client, const std::string& password,
                                    const std::string& hash) {
  std::unique_lock<std::mutex> lock(turn_mutex_);
  const auto from_client = pending_by_client_.find(client);
  if (next_ticket_ - finished_ >= kMaxPendingChecks ||
      (from_client != pending_by_client_.end() && from_client->second >= kMaxPendingPerClient)) {
    note_refused();
    return false;
  }
  ++pending_by_client_[client];
  const uint64_t ticket = next_ticket_++;
  turn_changed_.wait(lock, [&] { return ticket < finished_ + kConcurrentHashes; });
  lock.unlock();
  // The turn passes on however the check ends.
  struct Done {
    BasicAuthChecker& checker;
    const std::string& client;
    ~Done() {
      {
        std::lock_guard<std::mutex> done_lock(checker.turn_mutex_);
        ++checker.finished_;
        const auto pending = checker.pending_by_client_.find(client);
        if (--pending->second == 0) checker.pending_by_client_.erase(pending);
      }
      checker.turn_changed_.notify_all();
    }
  } done{*this, client};
  return password_matches(password, hash);
}

bool BasicAuthChecker::check(const std::string& client, const std::string& user,
                             const std::string& password) {
  if (users_.empty()) return false;
  try {
    const Digest credentials = digest({"credentials", user, password});
    if (remembered(credentials)) return true;
    const Digest name = digest({"user", user});
    const User* found = nullptr;
    for (const User& candidate : users_) {
      if (CRYPTO_memcmp(candidate.name.data(), name.data(), name.size()) == 0) found = &candidate;
    }
    if (found == nullptr) {
      // An unknown name costs what a known one does: bcrypt at the cost of a configured user
      // (the same one for the same name), against a salt that matches nothing.
      uint64_t pick = 0;
      std::memcpy(&pick, name.data(), sizeof pick);
      hash_in_turn(client, password, users_[pick % users_.size()].dummy_setting);
      return false;
    }
    if (!hash_in_turn(client, password, found->hash)) return false;
    remember(credentials);
    return true;
  } catch (const std::exception& error) {
    // Called on the /metrics server's auth pool: nothing may propagate.
    base::component_logger("metrics")->error("could not check basic auth: {}", error.what());
    return false;
  }
}

}  // namespace pgwaitprof::exporters
