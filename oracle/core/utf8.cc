#include "oracle/core/utf8.h"

#include <nlohmann/json.hpp>

#include <cstdint>

namespace lmo::oracle {

std::optional<size_t> first_invalid_utf8(std::string_view text) {
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const uint8_t b = s[i];
    if (b < 0x80) {
      ++i;
      continue;
    }
    // Lead byte: sequence length and the allowed range of the first continuation byte
    // (table 3-7 narrows it to exclude overlongs, surrogates and values above U+10FFFF).
    size_t len = 0;
    uint8_t lo = 0x80, hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) {
      len = 2;
    } else if (b == 0xE0) {
      len = 3, lo = 0xA0;
    } else if (b == 0xED) {
      len = 3, hi = 0x9F;
    } else if (b >= 0xE1 && b <= 0xEF) {
      len = 3;
    } else if (b == 0xF0) {
      len = 4, lo = 0x90;
    } else if (b >= 0xF1 && b <= 0xF3) {
      len = 4;
    } else if (b == 0xF4) {
      len = 4, hi = 0x8F;
    } else {
      return i;  // a continuation byte without a lead, C0/C1 (overlong) or F5..FF
    }
    if (i + 1 >= n || s[i + 1] < lo || s[i + 1] > hi) return i;
    for (size_t k = 2; k < len; ++k) {
      if (i + k >= n || s[i + k] < 0x80 || s[i + k] > 0xBF) return i;
    }
    i += len;
  }
  return std::nullopt;
}

std::string quote_for_message(std::string_view text) {
  return nlohmann::json(std::string(text))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string json_for_message(const nlohmann::json& v) {
  std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

}  // namespace lmo::oracle
