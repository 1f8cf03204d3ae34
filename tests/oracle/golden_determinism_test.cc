// Golden files are a pure function of the case and the version: `lmoracle golden` on a fixed
// subset of the built-in cases writes byte-identical files with 1 and 2 reference threads, and
// their SHA-256 hashes equal the checked-in manifest tests/data/golden_pinned_manifest.json. The
// golden values come from the reference alone (Philox inputs, MPFR arithmetic: correctly rounded
// on every machine), never from the fast kernels, so every build on every machine and SIMD target
// must reproduce the pin; a mismatch means the inputs, the reference or the file layout changed.
//
// Regenerate the pin only for such a change made on purpose (it bumps the golden version):
//   build/lmoracle golden --filter "$(cat tests/data/golden_pinned_filter.txt)" --out /tmp/pin
//   cp /tmp/pin/manifest.json tests/data/golden_pinned_manifest.json
//
// Fast-path outputs are not pinned across SIMD targets: the targets' vector widths give different
// summation orders (and SSE4 has no FMA), so their last bits legitimately differ; their thread
// invariance is checked per target in tests/kernels/fast_*_test.cc.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "oracle/core/sha256.h"
#include "tests/support/run_cli.h"

namespace {

namespace fs = std::filesystem;

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

TEST(GoldenDeterminism, PinnedSubsetIsByteIdenticalAcrossThreadsAndMatchesTheManifest) {
  const std::string filter =
      trimmed(lmo::testdata::file_bytes(fs::path(LMO_TEST_DATA_DIR) / "golden_pinned_filter.txt"));
  ASSERT_FALSE(filter.empty());
  const fs::path base = fs::temp_directory_path() / ("lmo_golden_pin_" + std::to_string(getpid()));
  fs::remove_all(base);
  for (int threads : {1, 2}) {
    const fs::path out = base / ("t" + std::to_string(threads));
    const lmo::testdata::CliResult r =
        lmo::testdata::run_cli(LMO_BIN, "golden --filter '" + filter + "' --threads " +
                                            std::to_string(threads) + " --out " + out.string());
    ASSERT_EQ(r.code, 0) << r.out;
  }
  const std::string one = lmo::testdata::file_bytes(base / "t1" / "manifest.json");
  const nlohmann::json m = nlohmann::json::parse(one);
  const nlohmann::json pin = nlohmann::json::parse(
      lmo::testdata::file_bytes(fs::path(LMO_TEST_DATA_DIR) / "golden_pinned_manifest.json"));
  ASSERT_GE(m["files"].size(), 10u) << "the filter selects too few cases";
  // Across thread counts: every file and the manifest, byte for byte.
  EXPECT_EQ(one, lmo::testdata::file_bytes(base / "t2" / "manifest.json"));
  for (const auto& f : m["files"]) {
    const std::string name = f["file"].get<std::string>();
    const std::string bytes = lmo::testdata::file_bytes(base / "t1" / name);
    EXPECT_EQ(bytes, lmo::testdata::file_bytes(base / "t2" / name)) << name;
    EXPECT_EQ(f["sha256"], lmo::oracle::to_hex(lmo::oracle::sha256(std::string_view(bytes))))
        << name;
  }
  // Against the pin: the same files with the same hashes.
  ASSERT_EQ(m["files"].size(), pin["files"].size());
  for (size_t i = 0; i < m["files"].size(); ++i) {
    EXPECT_EQ(m["files"][i]["file"], pin["files"][i]["file"]);
    EXPECT_EQ(m["files"][i]["sha256"], pin["files"][i]["sha256"])
        << m["files"][i]["file"] << " differs from the pinned golden file";
  }
  EXPECT_EQ(m, pin);
  fs::remove_all(base);
}

}  // namespace
