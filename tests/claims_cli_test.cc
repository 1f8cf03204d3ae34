// `lmoracle claims` as a user runs it: the table, JSON, filters, and exit code 2 for bad options.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "support/run_cli.h"

namespace {

using Result = lmo::testdata::CliResult;
Result run(const std::string& args, bool with_stderr = true) {
  return lmo::testdata::run_cli(LMO_BIN, args, with_stderr);
}

TEST(ClaimsCli, TableOfEveryClaimExitsZero) {
  const Result r = run("claims");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* id : {"C01", "C17", "C27", "E01", "E08"}) {
    EXPECT_NE(r.out.find(std::string(id) + "  "), std::string::npos) << id;
  }
  EXPECT_NE(r.out.find("erratum shown"), std::string::npos);
  EXPECT_NE(r.out.find("ref-e5m2"), std::string::npos);
  EXPECT_NE(r.out.find("counterexample:"), std::string::npos);
  EXPECT_EQ(r.out.find("FAILS"), std::string::npos) << r.out;
}

TEST(ClaimsCli, JsonForOneClaimOnOneBackend) {
  const Result r = run("claims --id C05 --backend ref-bf16 --json", false);
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["id"], "C05");
  EXPECT_EQ(j[0]["status"], "holds");
  ASSERT_EQ(j[0]["evidence"].size(), 1u);
  EXPECT_EQ(j[0]["evidence"][0]["backend"], "ref-bf16");
  EXPECT_TRUE(j[0]["evidence"][0]["ok"]);
}

TEST(ClaimsCli, CounterexampleInJson) {
  const Result r = run("claims --id C22 --json", false);
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j[0]["status"], "holds");
  EXPECT_NE(j[0]["counterexample"]["first"]["value"], j[0]["counterexample"]["second"]["value"]);
}

TEST(ClaimsCli, UnknownIdOrBackendExitsTwoNamingTheOptionAndTheValidValues) {
  const Result a = run("claims --id C99");
  EXPECT_EQ(a.code, 2);
  EXPECT_NE(a.out.find("--id"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("C27"), std::string::npos) << a.out;
  const Result b = run("claims --backend gpu");
  EXPECT_EQ(b.code, 2);
  EXPECT_NE(b.out.find("--backend"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("ref-e4m3"), std::string::npos) << b.out;
}

}  // namespace
