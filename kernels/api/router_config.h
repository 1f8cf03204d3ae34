// The MoE router's configuration, taken by fast/moe_router.h and gpu/api_moe.h alike: both
// libraries route with the same parameters. Plain C++17 with no CUDA, since gpu/api_moe.h is
// compiled by nvcc too and is installed with it.
#pragma once

#include <cstdint>

namespace lmo::kernels {

enum class RouterScore : uint8_t { sigmoid, softmax };
enum class GroupScore : uint8_t { top2_sum, max };

struct RouterConfig {
  int64_t experts = 1;  // N
  int64_t top_k = 1;    // K
  RouterScore score = RouterScore::sigmoid;
  int64_t n_group = 1;  // 1: no group limit
  int64_t topk_group = 1;
  GroupScore group_score = GroupScore::top2_sum;
  bool normalize = true;      // g_i = s_i / Σ_selected s_j; false: g_i = s_i
  float routed_scale = 1.0f;  // multiplies every gate
};

}  // namespace lmo::kernels
