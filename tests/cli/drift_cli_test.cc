// `lmoracle drift` as a user runs it: the files in --out (CSV and JSON holding the same rows, the
// PNG and SVG plot drawn by tools/drift_plot.py), the listing, and exit code 2 for bad options.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/run_cli.h"

namespace {

namespace fs = std::filesystem;

using Result = lmo::testdata::CliResult;
Result run(const std::string& args) { return lmo::testdata::run_cli(LMO_BIN, args); }

// One CSV line (RFC 4180 quoting: a field with a comma is quoted, "" is a quote inside).
std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      out.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("lmo_drift_cli_" + name);
  fs::remove_all(d);
  return d;
}

double csv_number(const std::string& s) {
  return s == "inf" ? std::numeric_limits<double>::infinity() : std::strtod(s.c_str(), nullptr);
}

TEST(DriftCli, QuickAuditWritesConsistentCsvJsonAndPlots) {
  const fs::path dir = fresh_dir("files");
  const Result r = run("drift --audit sinusoidal-identity --quick --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("PE·PE f32"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gpu policy: not run"), std::string::npos) << r.out;

  const nlohmann::json j =
      nlohmann::json::parse(lmo::testdata::file_bytes(dir / "sinusoidal-identity.json"));
  EXPECT_EQ(j["audit"], "sinusoidal-identity");
  EXPECT_TRUE(j["quick"]);
  const std::string csv = lmo::testdata::file_bytes(dir / "sinusoidal-identity.csv");
  std::istringstream lines(csv);
  std::string line;
  ASSERT_TRUE(std::getline(lines, line));
  EXPECT_EQ(line, "panel,policy,x,max_ulps,mean_ulps,max_rel,sig_bits,norm_rel,compared,nonfinite");
  size_t i = 0;
  while (std::getline(lines, line)) {
    ASSERT_LT(i, j["rows"].size());
    const nlohmann::json& row = j["rows"][i++];
    const std::vector<std::string> c = split(line);
    ASSERT_EQ(c.size(), 10u) << line;
    EXPECT_EQ(c[0], row["panel"]);
    EXPECT_EQ(c[1], row["policy"]);
    // The CSV writes the shortest text that reads back as the same double.
    EXPECT_EQ(csv_number(c[2]), row["x"].get<double>());
    EXPECT_EQ(csv_number(c[3]), row["max_ulps"].get<double>());
    EXPECT_EQ(csv_number(c[4]), row["mean_ulps"].get<double>());
    if (row["max_rel"].is_string()) {
      EXPECT_EQ(c[5], row["max_rel"].get<std::string>());
    } else {
      EXPECT_EQ(csv_number(c[5]), row["max_rel"].get<double>());
    }
    EXPECT_EQ(csv_number(c[6]), row["sig_bits"].get<double>());
    if (row["norm_rel"].is_string()) {
      EXPECT_EQ(c[7], row["norm_rel"].get<std::string>());
    } else {
      EXPECT_EQ(csv_number(c[7]), row["norm_rel"].get<double>());
    }
    EXPECT_EQ(std::stoll(c[8]), row["compared"].get<int64_t>());
    EXPECT_EQ(std::stoll(c[9]), row["nonfinite"].get<int64_t>());
  }
  EXPECT_EQ(i, j["rows"].size());
  EXPECT_EQ(i, 5u * 20u);  // 5 policies × 20 octaves

  const std::string png = lmo::testdata::file_bytes(dir / "sinusoidal-identity.png");
  ASSERT_GT(png.size(), 1000u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  const std::string svg = lmo::testdata::file_bytes(dir / "sinusoidal-identity.svg");
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("PE·PE f32"), std::string::npos);  // the legend names the policies
  fs::remove_all(dir);
}

TEST(DriftCli, JsonOnStdoutAndNoPlot) {
  const fs::path dir = fresh_dir("noplot");
  const Result r =
      run("drift --audit fp8-activations --quick --json --no-plot --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["audit"], "fp8-activations");
  EXPECT_TRUE(fs::exists(dir / "fp8-activations.csv"));
  EXPECT_TRUE(fs::exists(dir / "fp8-activations.json"));
  EXPECT_FALSE(fs::exists(dir / "fp8-activations.png"));
  fs::remove_all(dir);
}

TEST(DriftCli, ListNamesEveryAudit) {
  const Result r = run("list");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* a :
       {"rope-position", "softmax-vocab", "norm-width", "gelu-bf16", "sinusoidal-identity",
        "fp8-activations", "attention-length", "mla-absorption"}) {
    EXPECT_NE(r.out.find(std::string("  ") + a + "  "), std::string::npos) << a;
  }
}

TEST(DriftCli, BadOptionsExitTwoNamingTheField) {
  Result r = run("drift --audit nope --quick");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--audit"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rope-position"), std::string::npos) << r.out;
  r = run("drift --quick");
  EXPECT_EQ(r.code, 2) << r.out;
  // --out naming a file, not a folder.
  const fs::path file = fresh_dir("file");
  std::ofstream(file) << "x";
  r = run("drift --audit sinusoidal-identity --quick --no-plot --out " + file.string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--out"), std::string::npos) << r.out;
  fs::remove_all(file);
}

// --max-cost refuses an audit whose reference cost estimate is above it, before any output
// folder is made. The quick sinusoidal-identity sweep evaluates the exact Σ cos(Δ·ω_i) over
// d/2 = 8 frequencies (4 operations each) at 2 positions in each of 20 octaves: 1280.
TEST(DriftCli, CostLimitRefusesBeforeRunningOrWriting) {
  const fs::path dir = fresh_dir("cost");
  Result r = run("drift --audit sinusoidal-identity --quick --max-cost 1000 --out " + dir.string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--max-cost"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("audit sinusoidal-identity (quick): the reference cost estimate 1.28e+03 "
                       "operations exceeds the limit 1e+03"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(dir)) << "nothing may be written";
  // At the estimate itself it runs.
  r = run("drift --audit sinusoidal-identity --quick --no-plot --max-cost 1280 --out " +
          dir.string());
  EXPECT_EQ(r.code, 0) << r.out;
  fs::remove_all(dir);
}

}  // namespace
