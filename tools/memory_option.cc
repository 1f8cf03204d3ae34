#include "memory_option.h"

#include <cctype>
#include <stdexcept>

#include "oracle/core/case_error.h"
#include "oracle/core/row_slice.h"

int64_t parse_memory_size(const std::string& text, const std::string& option) {
  const auto bad = [&](const std::string& why) {
    return lmo::oracle::InputError("command line", option,
                                   "expected a size such as 8G, 512M or 1073741824 (bytes), " +
                                       why + ", got \"" + text + "\"");
  };
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || digits > 15) throw bad("a number of at most 15 digits");
  int64_t n = std::stoll(text.substr(0, digits));
  const std::string unit = text.substr(digits);
  int shift = 0;
  if (unit == "K" || unit == "k") {
    shift = 10;
  } else if (unit == "M" || unit == "m") {
    shift = 20;
  } else if (unit == "G" || unit == "g") {
    shift = 30;
  } else if (unit == "T" || unit == "t") {
    shift = 40;
  } else if (!unit.empty()) {
    throw bad("a suffix K, M, G or T");
  }
  if (n > (int64_t{1} << (62 - shift))) throw bad("at most 4 EiB");
  n <<= shift;
  if (n < (int64_t{1} << 20)) throw bad("at least 1M");
  return n;
}

void apply_max_memory(const std::string& text) {
  if (text.empty()) return;
  lmo::oracle::set_row_block_elements(
      lmo::oracle::block_for_memory(parse_memory_size(text, "--max-memory")));
}
