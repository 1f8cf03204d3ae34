// `lmoracle claims` as a user runs it: the table, JSON, filters, and exit code 2 for bad options.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/run_cli.h"

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

// The JSON object of a run that selects one claim (exit 0, a list of one).
nlohmann::json one_claim(const std::string& args) {
  const Result r = run(args, false);
  EXPECT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.size(), 1u) << r.out;
  return j.at(0);
}

TEST(ClaimsCli, JsonForOneClaimOnOneBackend) {
  const nlohmann::json c = one_claim("claims --id C05 --backend ref-bf16 --json");
  EXPECT_EQ(c["id"], "C05");
  EXPECT_EQ(c["status"], "holds");
  ASSERT_EQ(c["evidence"].size(), 1u);
  EXPECT_EQ(c["evidence"][0]["backend"], "ref-bf16");
  EXPECT_TRUE(c["evidence"][0]["ok"]);
}

// --backend fast: every fast target of this CPU; then one of them by name, as a table.
TEST(ClaimsCli, FastBackendsInJsonAndTable) {
  const nlohmann::json c = one_claim("claims --id C12 --backend fast --json");
  EXPECT_EQ(c["status"], "holds");
  ASSERT_GE(c["evidence"].size(), 1u);
  for (const auto& e : c["evidence"]) {
    EXPECT_EQ(e["backend"].get<std::string>().rfind("fast-", 0), 0u) << e.dump();
    EXPECT_TRUE(e["applicable"]) << e.dump();
    EXPECT_TRUE(e["ok"]) << e.dump();
    EXPECT_EQ(e["trials"], c["trials"]);
    EXPECT_NE(e["note"].get<std::string>().find("kernels run: softcap"), std::string::npos);
  }
  EXPECT_NE(c["float_bound"].get<std::string>().find("policy_table.cc"), std::string::npos);
  const std::string target = c["evidence"][0]["backend"];
  const Result t = run("claims --id C12 --backend " + target, false);
  ASSERT_EQ(t.code, 0) << t.out;
  EXPECT_NE(t.out.find("C12  holds"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("    " + target + ": ok  max residual"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find(target + " ran 1 of 1 claim(s) on its kernels (C12)"), std::string::npos)
      << t.out;
  // A counterexample claim is reference only there, and says so.
  const nlohmann::json cx = one_claim("claims --id C22 --backend " + target + " --json");
  bool kernel_row = false;
  for (const auto& e : cx["evidence"]) {
    if (e["backend"] != target) continue;
    kernel_row = true;
    EXPECT_FALSE(e["applicable"]);
    EXPECT_EQ(e["note"].get<std::string>().rfind("n/a: reference only", 0), 0u) << e.dump();
  }
  EXPECT_TRUE(kernel_row) << cx.dump(2);
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
  const Result b = run("claims --backend nosuch");
  EXPECT_EQ(b.code, 2);
  EXPECT_NE(b.out.find("--backend"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("ref-e4m3"), std::string::npos) << b.out;
}

}  // namespace
