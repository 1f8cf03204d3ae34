// A case's number as decimal text and back. The reference's model constants are decimals
// (reference/presets.h RopeScaling holds "40", "0.707", ...; rope_preset.h's preset_constant
// rounds each once to T), while a case's params arrive as doubles (oracle/core/params.h); the shortest
// decimal that reads back as the double is the number the case file wrote (up to 15 significant
// digits), so an op can hand the reference the case's own constants as a preset hands its own.
#pragma once

#include <charconv>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace lmo::oracle {

// The shortest decimal text that std::from_chars reads back as exactly x (x finite).
inline std::string shortest_decimal(double x) {
  char buf[64];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, x);
  if (r.ec != std::errc()) throw std::logic_error("shortest_decimal: to_chars failed");
  return std::string(buf, r.ptr);
}

// The double nearest to the decimal text (round to nearest-even, independent of the locale).
inline double decimal_value(std::string_view text) {
  double x = 0;
  const std::from_chars_result r = std::from_chars(text.data(), text.data() + text.size(), x);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size()) {
    throw std::logic_error("decimal_value: not a decimal: " + std::string(text));
  }
  return x;
}

}  // namespace lmo::oracle
