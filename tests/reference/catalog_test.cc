// The F-row catalog that `lmoracle list` prints must tell the truth: every row of FORMULAS.md
// is present once, in order, and every function it names is declared in the header it names.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "reference/catalog.h"

namespace lmo::ref {
namespace {

std::string read_header(const std::string& name) {
  std::ifstream in(std::string(LMO_SOURCE_DIR) + "/reference/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

TEST(Catalog, EveryFRowOnceInOrder) {
  const auto rows = formula_catalog();
  ASSERT_EQ(rows.size(), 23u);
  for (size_t i = 0; i < rows.size(); ++i) {
    char id[8];
    std::snprintf(id, sizeof id, "F%02zu", i + 1);
    EXPECT_EQ(rows[i].id, id);
    EXPECT_FALSE(rows[i].name.empty());
  }
}

TEST(Catalog, EveryNamedFunctionIsDeclaredInItsHeader) {
  for (const CatalogRow& row : formula_catalog()) {
    std::stringstream groups{std::string(row.functions)};
    std::string group;
    int names = 0;
    while (std::getline(groups, group, ';')) {
      const auto colon = group.find(':');
      ASSERT_NE(colon, std::string::npos) << row.id << ": '" << group << "' has no header";
      const std::string header = trim(group.substr(0, colon));
      const std::string text = read_header(header);
      if (text.empty()) {
        ADD_FAILURE() << row.id << ": reference/" << header << " is missing";
        continue;
      }
      std::stringstream fns{group.substr(colon + 1)};
      std::string fn;
      while (std::getline(fns, fn, ',')) {
        fn = trim(fn);
        // A function (name followed by its parameter list) or a class/struct template.
        const std::regex decl("(\\b" + fn + "\\s*\\()|((struct|class) " + fn + "\\b)");
        EXPECT_TRUE(std::regex_search(text, decl)) << row.id << ": " << fn << " not in " << header;
        ++names;
      }
    }
    EXPECT_GT(names, 0) << row.id;
  }
}

}  // namespace
}  // namespace lmo::ref
