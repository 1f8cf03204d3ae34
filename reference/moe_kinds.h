// The kinds of MoE routing (F20), shared by reference/moe.h and the model presets.
#pragma once

namespace lmo::ref {

enum class RouterScore {
  kSigmoid,  // s_i = sigmoid(z_i), independent per expert (DeepSeek-V3)
  kSoftmax,  // s = softmax(z) over all N experts (Switch, GShard, Mixtral, DeepSeek-V2)
};

enum class GroupScore {
  kTopTwoSum,  // sum of the two largest selection scores of the group (DeepSeek-V3)
  kMax,        // the largest selection score of the group (DeepSeek-V2 "group_limited_greedy")
};

}  // namespace lmo::ref
