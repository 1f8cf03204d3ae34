// Each op family registers its ops here (oracle/ops/<family>.cc). An explicit list instead of
// static registrars: a static library drops object files nobody references, and the order of
// `lmoracle list` stays fixed.
#pragma once

#include <vector>

#include "oracle/core/op.h"

namespace lmo::oracle {

void add_norm_ops(std::vector<OpInfo>& ops);
void add_activation_ops(std::vector<OpInfo>& ops);
void add_softmax_ops(std::vector<OpInfo>& ops);
void add_attention_ops(std::vector<OpInfo>& ops);
void add_paged_attention_ops(std::vector<OpInfo>& ops);
void add_mla_ops(std::vector<OpInfo>& ops);
void add_paged_mla_ops(std::vector<OpInfo>& ops);
void add_moe_ops(std::vector<OpInfo>& ops);
void add_moe_layer_ops(std::vector<OpInfo>& ops);
void add_positional_ops(std::vector<OpInfo>& ops);
void add_rope_ops(std::vector<OpInfo>& ops);
void add_ffn_ops(std::vector<OpInfo>& ops);
void add_block_ops(std::vector<OpInfo>& ops);
void add_moe_balance_ops(std::vector<OpInfo>& ops);
void add_fp8_ops(std::vector<OpInfo>& ops);

}  // namespace lmo::oracle
