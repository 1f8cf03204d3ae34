// Philox4x32-10, the counter-based generator of Salmon, Moraes, Dror and Shaw, "Parallel random
// numbers: as easy as 1, 2, 3" (SC'11), as specified by their Random123 library. Output is a pure
// function of (counter, key): any element of a stream can be computed alone, so threads and
// devices that split a tensor differently still produce identical bits.
#pragma once

#include <array>
#include <cstdint>

namespace lmo::oracle {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

// Ten rounds of the Philox 4x32 bijection of `ctr` under `key`; matches Random123's
// philox4x32(ctr, key) word for word.
std::array<uint32_t, 4> philox4x32_10(PhiloxCounter ctr, PhiloxKey key);

}  // namespace lmo::oracle
