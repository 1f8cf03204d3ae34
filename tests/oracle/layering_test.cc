// oracle/'s folders are layers (docs/architecture.md): a file includes headers of its own folder
// and of the layers below it, never of a layer above it or beside it, so that no two folders
// depend on each other and a change to a high layer (the judge, check) rebuilds nothing under
// it. This scans every source of oracle/ for `#include "oracle/<folder>/…"` and fails on an
// include that goes up or sideways, and on a folder the table does not place.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

namespace fs = std::filesystem;

// Lowest first. Folders of one rank are siblings: neither may include the other.
const std::map<std::string, int>& layers() {
  static const std::map<std::string, int> kLayers = {
      {"rules", 0},     // Policy, Recipe, RoundingPoint: what core and judge both speak
      {"core", 1},      // parameters, inputs, the Op interface and its record
      {"ops", 2},       // the op families and the registry of their records
      {"judge", 3},     // the judge, recipe judging, row blocks
      {"cases", 3},     // case files bound to ops
      {"golden", 4},    // safetensors and golden files
      {"check", 5},     // check and EXPECT_MATCHES_REFERENCE
      {"backends", 5},  // what runs kernels
      {"verify", 6},    {"claims", 6}, {"drift", 6},
  };
  return kLayers;
}

struct Scan {
  int files = 0, includes = 0;
  std::vector<std::string> violations;  // "path:line: why"
};

Scan scan(const fs::path& oracle) {
  const std::regex include(R"(^\s*#\s*include\s*"oracle/([A-Za-z_]+)/)");
  Scan s;
  for (const fs::directory_entry& folder : fs::directory_iterator(oracle)) {
    if (!folder.is_directory()) continue;
    const std::string from = folder.path().filename().string();
    const auto from_rank = layers().find(from);
    if (from_rank == layers().end()) {
      s.violations.push_back("oracle/" + from + "/: in no layer (place it in layering_test.cc's "
                             "table and in docs/architecture.md)");
      continue;
    }
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(folder.path())) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".h" && ext != ".cc")) continue;
      ++s.files;
      std::ifstream in(e.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        std::smatch m;
        if (!std::regex_search(line, m, include)) continue;
        ++s.includes;
        const std::string to = m[1].str();
        if (to == from) continue;
        const auto to_rank = layers().find(to);
        const std::string at =
            fs::relative(e.path(), oracle.parent_path()).generic_string() + ":" + std::to_string(n);
        if (to_rank == layers().end()) {
          s.violations.push_back(at + ": includes oracle/" + to + "/, which is in no layer");
        } else if (to_rank->second >= from_rank->second) {
          s.violations.push_back(at + ": " + from + " (layer " +
                                 std::to_string(from_rank->second) + ") includes " + to +
                                 " (layer " + std::to_string(to_rank->second) + "), " +
                                 (to_rank->second == from_rank->second ? "sideways" : "up"));
        }
      }
    }
  }
  return s;
}

TEST(OracleLayering, EveryIncludeGoesDown) {
  const Scan s = scan(fs::path(LMO_SOURCE_DIR) / "oracle");
  for (const std::string& v : s.violations) ADD_FAILURE() << v;
  EXPECT_GT(s.files, 150) << "the scan found too few sources under oracle/";
  EXPECT_GT(s.includes, 300);
}

// The scan itself, on a tree with one include up, one sideways, one down and an unplaced folder.
TEST(OracleLayering, AnIncludeUpOrSidewaysIsCaught) {
  const fs::path root = fs::temp_directory_path() / ("lmo_layering_" + std::to_string(::getpid()));
  const fs::path oracle = root / "oracle";
  const auto write = [&](const std::string& file, const std::string& text) {
    fs::create_directories((oracle / file).parent_path());
    std::ofstream(oracle / file) << text;
  };
  write("core/op.h", "#include \"oracle/judge/judge.h\"\n");       // up
  write("judge/judge.cc", "#include \"oracle/cases/case.h\"\n");   // sideways
  write("check/check.cc", " #  include \"oracle/core/op.h\"\n");   // down
  write("extras/x.h", "\n");                                       // no layer
  const Scan s = scan(oracle);
  fs::remove_all(root);
  ASSERT_EQ(s.violations.size(), 3u);
  std::string all;
  for (const std::string& v : s.violations) all += v + "\n";
  EXPECT_NE(all.find("oracle/core/op.h:1: core (layer 1) includes judge (layer 3), up"),
            std::string::npos) << all;
  EXPECT_NE(all.find("oracle/judge/judge.cc:1: judge (layer 3) includes cases (layer 3), sideways"),
            std::string::npos) << all;
  EXPECT_NE(all.find("oracle/extras/: in no layer"), std::string::npos) << all;
  EXPECT_EQ(s.includes, 3);
}

}  // namespace
