// The user's pgbench script options on vectors: every spelling pgbench accepts (short, clustered,
// attached, long, abbreviated, with weights), values of other options never read as options,
// the workload name a run of them gets, and the refusal of a built-in named beside them.
#include "model/pgbench_scripts.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace pgwaitprof::model {
namespace {

using Args = std::vector<std::string>;

std::optional<std::string> name_of(const Args& args) {
  return scripts_workload_name(pgbench_scripts(args));
}

TEST(PgbenchScripts, NoScriptOptionNoScripts) {
  EXPECT_TRUE(pgbench_scripts({"-c", "2", "-T", "3", "-M", "prepared"}).empty());
  EXPECT_EQ(name_of({"-c", "2", "-j", "2", "-P", "1", "-n", "-r"}), std::nullopt);
  EXPECT_TRUE(pgbench_scripts({}).empty());
  // "-b list" prints the builtins and runs none.
  EXPECT_TRUE(pgbench_scripts({"-b", "list"}).empty());
}

TEST(PgbenchScripts, EverySpellingOfTheBuiltins) {
  for (const Args& args : std::vector<Args>{{"-S"},
                                            {"--select-only"},
                                            {"--select"},
                                            {"-b", "select-only"},
                                            {"-bselect-only"},
                                            {"--builtin=select-only"},
                                            {"--builtin", "select-only"},
                                            {"-b", "sel"},
                                            {"-nS"},
                                            {"-c", "2", "-S", "-T", "3"}}) {
    const auto scripts = pgbench_scripts(args);
    ASSERT_EQ(scripts.size(), 1u) << args.front();
    EXPECT_EQ(scripts[0].kind, PgbenchScript::Kind::kBuiltin);
    EXPECT_EQ(scripts[0].name, "select-only") << args.front();
    EXPECT_EQ(name_of(args), "select-only") << args.front();
  }
  EXPECT_EQ(name_of({"-N"}), "simple-update");
  EXPECT_EQ(name_of({"--skip-some-updates"}), "simple-update");
  EXPECT_EQ(name_of({"-b", "simple"}), "simple-update");
  // pgwaitprof's workload of the same builtin gives its name: `-b tpcb-like` is `--workload tpcb`.
  EXPECT_EQ(name_of({"-b", "tpcb-like"}), "tpcb");
  EXPECT_EQ(name_of({"-b", "tpcb"}), "tpcb");
  // An ambiguous or unknown name stays as given (pgbench refuses it).
  EXPECT_EQ(name_of({"-b", "s"}), "s");
  EXPECT_EQ(name_of({"-b", "nonesuch"}), "nonesuch");
}

TEST(PgbenchScripts, FilesAndWeights) {
  const auto scripts = pgbench_scripts({"-f", "/home/me/bench/read.sql@3", "--file=write.sql"});
  ASSERT_EQ(scripts.size(), 2u);
  EXPECT_EQ(scripts[0].kind, PgbenchScript::Kind::kFile);
  EXPECT_EQ(scripts[0].name, "/home/me/bench/read.sql");
  EXPECT_EQ(scripts[0].weight, "3");
  EXPECT_EQ(scripts[0].option, "-f /home/me/bench/read.sql@3");
  EXPECT_EQ(scripts[1].name, "write.sql");
  EXPECT_EQ(scripts[1].weight, "");
  EXPECT_EQ(scripts[1].option, "--file=write.sql");
  EXPECT_EQ(name_of({"-f", "/home/me/bench/read.sql@3", "--file=write.sql"}),
            "file:read.sql@3+file:write.sql");
  EXPECT_EQ(name_of({"-fbench.sql"}), "file:bench.sql");
  EXPECT_EQ(name_of({"-b", "select-only@9", "-b", "tpcb-like@1"}), "select-only@9+tpcb@1");
  EXPECT_EQ(name_of({"-S", "-f", "x.sql"}), "select-only+file:x.sql");
}

TEST(PgbenchScripts, ValuesOfOtherOptionsAreNotOptions) {
  // A value that looks like a script option belongs to the option before it.
  EXPECT_TRUE(pgbench_scripts({"-D", "-S", "--log-prefix", "-f"}).empty());
  EXPECT_TRUE(pgbench_scripts({"--define=x=-S", "-U", "-N"}).empty());
  // A cluster ends at the option that takes a value: "-c2S" is 2S clients, no script.
  EXPECT_TRUE(pgbench_scripts({"-c2S"}).empty());
  // After "--" nothing is an option; a database name is not one either.
  EXPECT_TRUE(pgbench_scripts({"--", "-S"}).empty());
  EXPECT_TRUE(pgbench_scripts({"postgres"}).empty());
  // A long option abbreviated to more than one name is refused by pgbench: not a script here.
  EXPECT_TRUE(pgbench_scripts({"--s"}).empty());
}

TEST(PgbenchScripts, ABuiltinWorkloadBesideAScriptOptionIsRefused) {
  EXPECT_EQ(workload_conflict("tpcb", {"-c", "2", "-S"}),
            "workload \"tpcb\" and pgbench's script option \"-S\" cannot be used together");
  EXPECT_EQ(workload_conflict("select-only", {"--file=a.sql"}),
            "workload \"select-only\" and pgbench's script option \"--file=a.sql\" cannot be used "
            "together");
  EXPECT_EQ(workload_conflict("tpcb", {"-c", "2", "-M", "prepared"}), std::nullopt);
}

}  // namespace
}  // namespace pgwaitprof::model
