// F10's two pairings of a head's rotary dimensions, as the kernel libraries take them:
// interleaved pairs (2k, 2k+1) (the original RoFormer and GPT-J layout) or half-split pairs
// (k, k + r/2) (GPT-NeoX and Llama). reference/rope.h's ref::RopeLayout is the reference's own.
#pragma once

#include <cstdint>

namespace lmo::kernels {

enum class RopeLayout : uint8_t { interleaved, half_split };

}  // namespace lmo::kernels
