// Basic-auth checks of /metrics: every configured user with its own password, nobody else;
// hashes of each bcrypt flavour and cost. Their timing and their behaviour under a flood are
// tested against the real daemon (tests/faults/metrics_abuse_test.cc).
#include "exporters/prometheus/basic_auth.h"

#include <crypt.h>
#include <gtest/gtest.h>

#include <array>

namespace pgwaitprof::exporters {
namespace {

std::string bcrypt_hash(const std::string& password, const char* prefix, int cost) {
  std::array<char, CRYPT_GENSALT_OUTPUT_SIZE> salt{};
  EXPECT_NE(crypt_gensalt_rn(prefix, static_cast<unsigned long>(cost), nullptr, 0, salt.data(),
                             static_cast<int>(salt.size())),
            nullptr);
  crypt_data data{};
  return crypt_r(password.c_str(), salt.data(), &data);
}

TEST(BasicAuth, EachUserWithItsOwnPasswordAndNobodyElse) {
  BasicAuthChecker checker({{"prometheus", bcrypt_hash("scrape-pw", "$2b$", 4)},
                            {"grafana", bcrypt_hash("other-pw", "$2a$", 5)},
                            {"agent", bcrypt_hash("third-pw", "$2y$", 4)}});
  for (int round = 0; round < 2; ++round) {  // the second round answers from memory
    EXPECT_TRUE(checker.check("127.0.0.1", "prometheus", "scrape-pw"));
    EXPECT_TRUE(checker.check("127.0.0.1", "grafana", "other-pw"));
    EXPECT_TRUE(checker.check("127.0.0.1", "agent", "third-pw"));
  }
  EXPECT_FALSE(checker.check("127.0.0.1", "prometheus", "other-pw"));
  EXPECT_FALSE(checker.check("127.0.0.1", "grafana", "scrape-pw"));
  EXPECT_FALSE(checker.check("127.0.0.1", "prometheus", "scrape-pw "));
  EXPECT_FALSE(checker.check("127.0.0.1", "prometheus", ""));
  EXPECT_FALSE(checker.check("127.0.0.1", "Prometheus", "scrape-pw"));
  EXPECT_FALSE(checker.check("127.0.0.1", "nobody", "scrape-pw"));
  EXPECT_FALSE(checker.check("127.0.0.1", "", ""));
}

TEST(BasicAuth, MoreVerifiedCredentialsThanRememberedStillPass) {
  // bcrypt reads 72 bytes at most: every password that starts with these verifies.
  const std::string stem(72, 'x');
  BasicAuthChecker checker({{"prometheus", bcrypt_hash(stem, "$2b$", 4)}});
  const size_t count = BasicAuthChecker::kRememberedCredentials + 4;
  for (size_t round = 0; round < 2; ++round) {
    for (size_t index = 0; index < count; ++index) {
      EXPECT_TRUE(checker.check("127.0.0.1", "prometheus", stem + std::to_string(index))) << index;
    }
  }
  EXPECT_FALSE(checker.check("127.0.0.1", "prometheus", std::string(71, 'x')));
}

TEST(BasicAuth, AHashThatIsNotBcryptIsRefusedAtTheStart) {
  const std::map<std::string, std::string> users = {{"prometheus", "$6$salt$sha512crypt"}};
  EXPECT_THROW(BasicAuthChecker{users}, std::runtime_error);
}

TEST(BasicAuth, NoUsersLetsNobodyIn) {
  BasicAuthChecker checker({});
  EXPECT_FALSE(checker.check("127.0.0.1", "", ""));
  EXPECT_FALSE(checker.check("127.0.0.1", "prometheus", "scrape-pw"));
}

TEST(BasicAuth, PasswordMatchesOnlyItsHash) {
  const auto hash = bcrypt_hash("scrape-pw", "$2b$", 4);
  EXPECT_TRUE(password_matches("scrape-pw", hash));
  EXPECT_FALSE(password_matches("scrape-pW", hash));
  EXPECT_FALSE(password_matches("scrape-pw", hash.substr(0, 29)));  // the salt alone
  EXPECT_FALSE(password_matches("scrape-pw", "not a hash"));
}

}  // namespace
}  // namespace pgwaitprof::exporters
