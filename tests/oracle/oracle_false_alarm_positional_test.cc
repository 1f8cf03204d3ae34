// No false alarms for the position encodings, RoPE and the FFNs (oracle/ops/positional.h,
// rope.h, ffn.h): correct kernels — the exact values rounded once (`ref`), the reference formula
// computed in f64 and in f32 with every operation rounded once (`ref-f64`, `ref-f32`: f32
// arithmetic inside, outputs rounded to f32, bf16 or f16) and any fast kernel that joins verify's
// default run — are never flagged over 1000 random cases per family: random op, shapes,
// layouts, scaling rules and their parameters, positions up to 2^21, storage formats and seeds,
// all drawn from Philox.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/support/oracle_sweep.h"

namespace lmo::oracle {
namespace {

using lmo::testing::Draw;
using lmo::testing::sweep;
using nlohmann::json;

// Positions in [min, max): max log-uniform up to 2^21 (past Llama 3.1's 128K context), min 0 or
// a random point below max so that some cases hold only large positions.
void positions(Draw& d, json& params, const char* max_key = "max_position") {
  const auto max = static_cast<int64_t>(d.log_uniform(1, 2097152));
  params[max_key] = max;
  if (d.between(0, 1) == 1) params["min_position"] = d.between(0, max - 1);
}

json rope_case(Draw& d) {
  const bool table = d.between(0, 2) == 0;
  const int64_t head_dim = 2 * d.between(1, 32);
  json p = {{"tokens", d.between(1, 3)},
            {"heads", d.between(1, 2)},
            {"head_dim", head_dim},
            {"rotary_dims", d.between(0, 2) == 0 ? 2 * d.between(1, head_dim / 2) : head_dim},
            {"layout", d.pick<std::string>({"half_split", "interleaved"})},
            {"base", d.pick<double>({10000.0, 500000.0, 50000.0, d.log_uniform(10, 1e7)})}};
  positions(d, p);
  const std::string scaling = d.pick<std::string>({"none", "pi", "ntk", "yarn", "llama31"});
  if (scaling != "none" && !(scaling == "ntk" && p["rotary_dims"] == 2)) {
    p["scaling"] = scaling;
    p["factor"] = d.log_uniform(1, 64);
    if (scaling == "yarn" || scaling == "llama31") {
      p["original_context"] = static_cast<int64_t>(d.log_uniform(16, 65536));
    }
    if (scaling == "yarn") {
      p["beta_fast"] = d.log_uniform(4, 64);
      p["beta_slow"] = d.log_uniform(0.25, 4);
      p["attention_factor"] = d.between(0, 1) == 1;
    }
    if (scaling == "llama31") {
      const double low = d.log_uniform(0.5, 2);
      p["low_freq_factor"] = low;
      p["high_freq_factor"] = low * d.log_uniform(1.5, 8);
    }
  }
  if (table) p["table"] = d.pick<std::string>({"f32", "storage"});
  return {{"op", table ? "rope_table" : "rope"}, {"params", p}};
}

json positional_case(Draw& d) {
  const std::string op =
      d.pick<std::string>({"sinusoidal_pe", "learned_position", "shaw_logits", "t5_bias"});
  json p;
  if (op == "sinusoidal_pe") {
    p = {{"tokens", d.between(1, 6)},
         {"d", 2 * d.between(1, 64)},
         {"base", d.pick<double>({10000.0, d.log_uniform(10, 1e6)})}};
    positions(d, p);
  } else if (op == "learned_position") {
    // The tables are generated whole: at most 2^14 position-table values per case.
    const auto rows = static_cast<int64_t>(d.log_uniform(1, 131072));
    p = {{"tokens", d.between(1, 8)},
         {"d", d.between(1, std::clamp<int64_t>(16384 / rows, 1, 32))},
         {"vocab", d.between(1, 64)},
         {"max_positions", rows}};
    if (d.between(0, 1) == 1) p["min_position"] = d.between(0, rows - 1);
  } else if (op == "shaw_logits") {
    p = {{"n_q", d.between(1, 12)},
         {"n_k", d.between(1, 12)},
         {"d_k", d.between(1, 48)},
         {"max_relative_position", d.between(0, 8)}};
  } else {
    const bool bidirectional = d.between(0, 1) == 1;
    const int64_t buckets = d.between(bidirectional ? 4 : 2, 64);
    const int64_t max_exact = (bidirectional ? buckets / 2 : buckets) / 2;
    p = {{"heads", d.between(1, 3)},     {"bidirectional", bidirectional},
         {"num_buckets", buckets},       {"max_distance", max_exact + d.between(1, 300)},
         {"query_len", d.between(1, 8)}, {"key_len", d.between(1, 64)}};
    if (d.between(0, 1) == 1) p["query_offset"] = static_cast<int64_t>(d.log_uniform(1, 1 << 20));
  }
  return {{"op", op}, {"params", p}};
}

json ffn_case(Draw& d) {
  const bool gated = d.between(0, 1) == 1;
  json p = {{"tokens", d.between(1, 3)},
            {"d", d.between(1, 32)},
            {"d_ff", d.between(1, 64)},
            {"activation", d.pick<std::string>({"relu", "gelu", "gelu_tanh", "silu"})}};
  if (!gated) p["bias"] = d.between(0, 1) == 1;
  return {{"op", gated ? "glu_ffn" : "ffn"}, {"params", p}};
}

TEST(NoFalseAlarms, Rope) { sweep("rope", rope_case, {}); }
TEST(NoFalseAlarms, PositionEncodings) { sweep("positional", positional_case, {}); }
// With every backend, the fast FFN kernels included: on these tiny compositions (d_ff or d down to
// 1) an output can carry one or two rounding errors amplified by a cancelling dot product, and the
// naive run's largest error alone, one sample of them, flagged 2 of these 1000 cases on every fast
// target (glu_ffn with d = 3, d_ff = 49, and with d = 24, d_ff = 1, where the fast error was 1.2
// and 1.5 times the bound); the ops' error scale (oracle/ops/ffn_error_scale.h) covers them.
TEST(NoFalseAlarms, FeedForward) { sweep("ffn", ffn_case, {}); }

}  // namespace
}  // namespace lmo::oracle
