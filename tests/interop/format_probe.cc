// Test helper for the interoperability tests: reads requests on stdin, one per line, and
// answers each on stdout, so another implementation (Python's ml_dtypes) can be compared bit
// for bit.
//   e <format> <hex bits of a binary64>   ->  hex pattern of the value rounded to <format>
//   s <format> <hex bits of a binary64>   ->  the same with saturating overflow
//   d <format> <hex pattern>              ->  hex bits of the exact binary64 value
#include <bit>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>

#include "reference/formats.h"

int main() {
  std::ios::sync_with_stdio(false);
  std::string op, name, hex;
  while (std::cin >> op >> name >> hex) {
    const auto f = lmo::ref::parse_format(name);
    if (!f) {
      std::cerr << "format_probe: unknown format '" << name << "'\n";
      return 2;
    }
    const uint64_t v = std::stoull(hex, nullptr, 16);
    uint64_t out;
    if (op == "d") {
      out = std::bit_cast<uint64_t>(lmo::ref::decode<double>(*f, v));
    } else {
      const auto mode = op == "s" ? lmo::ref::Overflow::kSaturate : lmo::ref::Overflow::kIeee;
      out = lmo::ref::encode(*f, std::bit_cast<double>(v), mode);
    }
    char buf[20];
    std::snprintf(buf, sizeof buf, "%llx\n", static_cast<unsigned long long>(out));
    std::cout << buf;
  }
  return 0;
}
