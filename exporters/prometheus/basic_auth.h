// HTTP basic auth of /metrics (web.basic_auth_users: user -> bcrypt hash), made to hold up
// against hostile clients (issue 23):
// - the same work for every rejection: an unknown user's password is run through bcrypt too,
//   against a dummy salt of a configured user's cost, so the time a 401 takes does not say
//   which user names exist; names and hashes are compared in constant time;
// - credentials that once verified are remembered as a keyed digest (never the password), so a
//   scraper's every scrape costs microseconds instead of a bcrypt;
// - bcrypt runs one check at a time, first come first served, and only kMaxPendingChecks may
//   hash or wait to hash, kMaxPendingPerClient of them from one client address: beyond that a
//   check is refused at once. A flood of wrong passwords then holds a few of the HTTP server's
//   threads and at most one core, never all of them; remembered scrapers are not queued behind
//   it, and one flooding host leaves room for a new scraper elsewhere.
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace pgwaitprof::exporters {

// Whether `password` matches a bcrypt (or any crypt(3)) `hash`; the comparison of the result
// takes the same time wherever the two differ.
bool password_matches(const std::string& password, const std::string& hash);

class BasicAuthChecker {
 public:
  // Checks that hash or wait to hash at once; more are refused (a fast 401).
  static constexpr size_t kMaxPendingChecks = 8;
  // Of them, checks from one client address.
  static constexpr size_t kMaxPendingPerClient = 2;
  // bcrypt checks that run at once (the rest wait, in order of arrival).
  static constexpr size_t kConcurrentHashes = 1;
  // Credentials remembered after a successful check (the oldest is forgotten first).
  static constexpr size_t kRememberedCredentials = 16;

  // `users` maps names to bcrypt hashes ($2a$, $2b$ or $2y$, as the configuration validated
  // them); throws std::runtime_error when no random key can be had.
  explicit BasicAuthChecker(const std::map<std::string, std::string>& users);
  BasicAuthChecker(const BasicAuthChecker&) = delete;
  BasicAuthChecker& operator=(const BasicAuthChecker&) = delete;
  ~BasicAuthChecker();

  // Whether `user` exists and `password` is its password, asked by `client` (its address; ""
  // when unknown). Called on the HTTP server's threads at once; never throws.
  bool check(const std::string& client, const std::string& user, const std::string& password);

 private:
  using Digest = std::array<unsigned char, 32>;
  struct User {
    Digest name;                // keyed digest of the name
    std::string hash;           // as configured
    std::string dummy_setting;  // same prefix and cost, random salt: what unknown names hash with
  };

  // HMAC-SHA256 under this process's random key of the parts, each prefixed by its length.
  Digest digest(std::initializer_list<std::string_view> parts) const;
  bool remembered(const Digest& credentials);
  void remember(const Digest& credentials);
  // bcrypt of `password` against `hash`, after waiting for a turn; false without hashing when
  // kMaxPendingChecks, or kMaxPendingPerClient from `client`, are already pending.
  bool hash_in_turn(const std::string& client, const std::string& password,
                    const std::string& hash);
  void note_refused();

  std::array<unsigned char, 32> key_{};
  std::vector<User> users_;

  std::mutex remembered_mutex_;
  std::vector<Digest> remembered_;  // a ring of kRememberedCredentials
  size_t next_slot_ = 0;

  std::mutex turn_mutex_;
  std::condition_variable turn_changed_;
  uint64_t next_ticket_ = 0;                         // tickets handed out
  uint64_t finished_ = 0;                            // tickets whose check is done
  std::map<std::string, size_t> pending_by_client_;  // at most kMaxPendingChecks entries
  uint64_t refused_since_warning_ = 0;
  std::chrono::steady_clock::time_point last_warning_{};
};

}  // namespace pgwaitprof::exporters
