// No op name in a hand-written list: what the oracle says about an op lives in its record
// (OpInfo, oracle/core/op.h; written in oracle/ops/<family>.cc), and every table, adapter map and
// recipe derives from the registry of records. This scans the program's C++ and CUDA sources
// (not the tests, whose cases name the ops they test, and not oracle/ops/, where the records
// are) for the three shapes a hand-kept op list takes:
//   - a list: two op names side by side in one literal list ({"rmsnorm", "layernorm"});
//   - a map or table: rows {"op", …} for three or more ops in one file;
//   - an if-chain: `== "op"` for three or more ops in one file.
// The activation names relu, gelu, gelu_tanh and silu are also values of the `act` parameter
// (reference/activation_kind.h), so lists and maps of those alone are activations, not ops.
// No file is exempt: the GPU bench, the last to keep its own list, runs the registry's workloads
// through the gpu backend (bench/gpu/device_timing.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "oracle/core/op.h"
#include "oracle/ops/registry.h"
#include "reference/activation_kind.h"

namespace lmo::oracle {
namespace {

namespace fs = std::filesystem;

std::set<std::string> op_names() {
  std::set<std::string> names;
  for (const OpInfo& o : op_registry()) names.insert(o.name);
  return names;
}

std::set<std::string> activation_names() {
  std::set<std::string> names;
  for (ref::Activation a : {ref::Activation::kReLU, ref::Activation::kGELU,
                            ref::Activation::kGELUTanh, ref::Activation::kSiLU}) {
    names.insert(ref::activation_name(a));
  }
  return names;
}

// The text without // comments (a comment may name ops freely) and without line breaks' effect
// on the patterns (they match across lines).
std::string code_of(const fs::path& p) {
  std::ifstream in(p);
  std::string out, line;
  while (std::getline(in, line)) {
    const size_t c = line.find("//");
    out += (c == std::string::npos ? line : line.substr(0, c)) + "\n";
  }
  return out;
}

// The op lists in one file's code, described; empty when there are none.
std::vector<std::string> op_lists_in(const std::string& code, const std::set<std::string>& ops,
                                     const std::set<std::string>& acts) {
  std::vector<std::string> found;
  const std::regex side_by_side(R"re("([a-z0-9_]+)"\s*,\s*"([a-z0-9_]+)")re");
  for (auto it = std::sregex_iterator(code.begin(), code.end(), side_by_side);
       it != std::sregex_iterator(); ++it) {
    const std::string a = (*it)[1], b = (*it)[2];
    if (ops.count(a) && ops.count(b) && !(acts.count(a) && acts.count(b))) {
      found.push_back("list {\"" + a + "\", \"" + b + "\", ...}");
    }
  }
  const std::regex entry(R"re(\{\s*"([a-z0-9_]+)"\s*,)re");
  const std::regex compared(R"re(==\s*"([a-z0-9_]+)")re");
  for (const auto& [re, what] :
       {std::pair{&entry, "map of"}, std::pair{&compared, "if-chain on"}}) {
    std::set<std::string> names;
    bool only_acts = true;
    for (auto it = std::sregex_iterator(code.begin(), code.end(), *re);
         it != std::sregex_iterator(); ++it) {
      const std::string n = (*it)[1];
      if (!ops.count(n)) continue;
      names.insert(n);
      only_acts = only_acts && acts.count(n);
    }
    if (names.size() >= 3 && !(what == std::string("map of") && only_acts)) {
      std::string s = std::string(what) + " " + std::to_string(names.size()) + " ops:";
      for (const std::string& n : names) s += " " + n;
      found.push_back(s);
    }
  }
  return found;
}

TEST(OpLists, TheDetectorSeesEachShape) {
  const std::set<std::string> ops = op_names(), acts = activation_names();
  EXPECT_EQ(op_lists_in(R"({"rmsnorm", "layernorm"})", ops, acts).size(), 1u);
  EXPECT_EQ(
      op_lists_in("{\"softmax\", run_a},\n{\"rope\", run_b},\n{\"t5_bias\", &run_c}", ops, acts)
          .size(),
      1u);
  EXPECT_EQ(
      op_lists_in(R"({"relu", "", p1, "why"}, {"gelu", "", p2, "why"}, {"ffn", "", p3, "why"})",
                  ops, acts)
          .size(),
      1u);
  EXPECT_EQ(op_lists_in(R"(x == "ffn" || x == "glu_ffn" || x == "moe_layer")", ops, acts).size(),
            1u);
  // Not lists: activation values, one op named in a message, two map entries.
  EXPECT_TRUE(op_lists_in(R"({"relu", "gelu", "gelu_tanh", "silu"})", ops, acts).empty());
  EXPECT_TRUE(
      op_lists_in(R"({"gelu", Act::kGELU}, {"silu", Act::kSiLU}, {"relu", Act::kReLU})", ops, acts)
          .empty());
  EXPECT_TRUE(op_lists_in(R"(throw E("rmsnorm: rows must be positive"); f("rope", 3);)", ops, acts)
                  .empty());
  EXPECT_TRUE(op_lists_in("{\"softmax\", run_a},\n{\"rope\", run_b}", ops, acts).empty());
}

TEST(OpLists, NoOpNameInAHandWrittenList) {
  const fs::path root = LMO_SOURCE_DIR;
  const std::set<std::string> ops = op_names(), acts = activation_names();
  int scanned = 0;
  for (const char* top :
       {"reference", "kernels", "fast", "gpu", "oracle", "tools", "python/src", "bench"}) {
    if (!fs::exists(root / top)) continue;
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(root / top)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cc" && ext != ".h" && ext != ".cu" && ext != ".cuh")) {
        continue;
      }
      const std::string rel = fs::relative(e.path(), root).generic_string();
      if (rel.rfind("oracle/ops/", 0) == 0) continue;  // the records themselves
      ++scanned;
      const std::vector<std::string> lists = op_lists_in(code_of(e.path()), ops, acts);
      if (lists.empty()) continue;
      for (const std::string& l : lists) {
        ADD_FAILURE() << rel << ": " << l
                      << " (derive it from the ops' records: op_registry(), OpInfo)";
      }
    }
  }
  EXPECT_GT(scanned, 300) << "the scan found too few sources under " << root;
}

}  // namespace
}  // namespace lmo::oracle
