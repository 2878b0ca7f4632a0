// Masking of passwords (issue 23 item 4): connection strings read by libpq's own parser,
// whatever their quoting, escaping or percent-encoding; free text that quotes them; and argv
// memory overwritten in place.
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <map>
#include <string>
#include <vector>

#include "collectors/pg_session.h"

namespace pgwaitprof::collectors {
namespace {

// Options libpq reads in `conninfo` (keyword -> value), or nothing when it cannot parse it.
std::map<std::string, std::string> libpq_reading(const std::string& conninfo) {
  std::map<std::string, std::string> values;
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &error);
  PQfreemem(error);
  if (options == nullptr) return values;
  for (const PQconninfoOption* option = options; option->keyword != nullptr; ++option) {
    if (option->val != nullptr) values[option->keyword] = option->val;
  }
  PQconninfoFree(options);
  return values;
}

// A connection string with a password, the password as libpq reads it, and pieces of it as
// written: none of them may be left in a masked text.
struct Case {
  std::string conninfo;
  std::string password;
  std::vector<std::string> pieces;
};

std::vector<Case> cases() {
  return {
      {R"(host=db1 password=Sp\ ace\ Pw9 dbname=bench)", "Sp ace Pw9", {"Sp", "ace", "Pw9"}},
      {R"(host=db1 password='a b\'cQ7' user=bench)", "a b'cQ7", {"a b", "cQ7"}},
      {"postgresql://bench:pa%20ssX1@db1:5433/pgbench", "pa ssX1", {"pa%20ss", "pa ss", "ssX1"}},
      {"postgresql://bench@db1/pgbench?sslmode=disable&password=qu3ry-pw&connect_timeout=5",
       "qu3ry-pw",
       {"qu3ry"}},
      {"application_name='password=decoy' password=r3al-pw host=db1", "r3al-pw", {"r3al"}},
      {"host=db1 password = sp4ced-pw", "sp4ced-pw", {"sp4ced"}},
  };
}

void expect_hidden(const std::string& masked, const Case& example) {
  for (const auto& piece : example.pieces) {
    EXPECT_EQ(masked.find(piece), std::string::npos)
        << "\"" << piece << "\" of " << example.conninfo << " left in " << masked;
  }
}

TEST(MaskPassword, LibpqReadsEveryCaseAsItsPassword) {
  // The premise of the cases below: each is one libpq reads, with that password.
  for (const auto& example : cases()) {
    EXPECT_EQ(libpq_reading(example.conninfo)["password"], example.password) << example.conninfo;
  }
}

TEST(MaskPassword, HidesThePasswordAndKeepsEveryOtherOption) {
  for (const auto& example : cases()) {
    const auto masked = mask_password(example.conninfo);
    expect_hidden(masked, example);
    auto before = libpq_reading(example.conninfo);
    auto after = libpq_reading(masked);
    EXPECT_EQ(after["password"], "********") << masked;
    before.erase("password");
    after.erase("password");
    EXPECT_EQ(after, before) << example.conninfo << " -> " << masked;
  }
}

TEST(MaskPassword, KeepsAValueThatOnlyMentionsPassword) {
  const auto masked = mask_password("application_name='password=decoy' password=r3al-pw host=db1");
  EXPECT_EQ(libpq_reading(masked)["application_name"], "password=decoy") << masked;
}

TEST(MaskPassword, MasksTheSslKeyPasswordToo) {
  const auto masked = mask_password("host=db1 sslpassword=k3y-pw sslkey=/etc/key.pem");
  EXPECT_EQ(masked.find("k3y"), std::string::npos) << masked;
  EXPECT_EQ(libpq_reading(masked)["sslkey"], "/etc/key.pem");
}

TEST(MaskPassword, WithoutAPasswordTheStringIsKeptAsWritten) {
  EXPECT_EQ(mask_password("postgresql://bench@db1/pgbench"), "postgresql://bench@db1/pgbench");
  EXPECT_EQ(mask_password("dbname=bench   host=db1"), "dbname=bench   host=db1");
  EXPECT_EQ(mask_password(""), "");
}

TEST(MaskPassword, AStringLibpqCannotParseIsMaskedAsText) {
  // An unterminated quote and a bad URI: libpq refuses both, and may quote them in its error.
  EXPECT_EQ(mask_password(R"(host=db1 password='un\'term1nated)").find("term1nated"),
            std::string::npos);
  EXPECT_EQ(mask_password("postgresql://bench:secret123@[::1").find("secret123"),
            std::string::npos);
  // libpq's keywords are lower case; a user who wrote this still meant a password.
  EXPECT_EQ(mask_password("host=db1 PASSWORD=Upp3r-pw").find("Upp3r"), std::string::npos);
}

TEST(MaskSecrets, HidesEachCaseQuotedInAMessage) {
  for (const auto& example : cases()) {
    for (const auto& text :
         {"could not connect to \"" + example.conninfo + "\": connection refused",
          "The following arguments were not expected: " + example.conninfo + " extra",
          "invalid URI: \"" + example.conninfo + "\"\nDETAIL: a second line"}) {
      const auto masked = mask_secrets(text);
      expect_hidden(masked, example);
      EXPECT_NE(masked.find("********"), std::string::npos) << masked;
    }
  }
}

TEST(MaskSecrets, LeavesTheRestOfTheMessage) {
  EXPECT_EQ(mask_secrets(R"(could not connect to "host=db1 password=Sp\ ace\ Pw9 port=5432")"),
            R"(could not connect to "host=db1 password=******** port=5432")");
  EXPECT_EQ(mask_secrets("invalid URI: \"postgresql://bench:pa%20ss@[::1\""),
            "invalid URI: \"postgresql://bench:********@[::1\"");
  EXPECT_EQ(mask_secrets("postgresql://db1:5432/pgbench is down"),
            "postgresql://db1:5432/pgbench is down");
  EXPECT_EQ(mask_secrets("no secrets in here"), "no secrets in here");
}

TEST(MaskSecretsInPlace, OverwritesOnlyThePasswordAndKeepsTheLength) {
  for (const auto& example : cases()) {
    std::string argument = example.conninfo;
    mask_secrets_in_place(argument);
    EXPECT_EQ(argument.size(), example.conninfo.size());
    expect_hidden(argument, example);
    const auto read = libpq_reading(argument);
    ASSERT_TRUE(read.contains("password")) << argument;
    EXPECT_EQ(read.at("password").find_first_not_of('*'), std::string::npos) << argument;
  }
  std::string option = "--results-dsn=postgresql://u:s3cret@h/db";
  mask_secrets_in_place(option);
  EXPECT_EQ(option, "--results-dsn=postgresql://u:******@h/db");
  std::string plain = "--label=nothing-to-hide";
  mask_secrets_in_place(plain);
  EXPECT_EQ(plain, "--label=nothing-to-hide");
}

}  // namespace
}  // namespace pgwaitprof::collectors
