// gpu/api_positional.h's learned_position, shaw_logits and t5_bias: argument validation
// (everywhere: it runs before any CUDA call, kernels/api/validate_positional.h's checks under gpu::'s
// names, every index checked against its table); with a device, learned_position and t5_bias
// bitwise equal to fast/'s in every storage (the f32 sum of two stored values is the same
// correctly rounded number both ways; T5's values are copied, its buckets decided exactly by the
// same thresholds), on shapes of several blocks and a partial one, causal and bidirectional,
// long-context query offsets included; shaw_logits on a shape where the clip bites, run twice
// bitwise identical. The oracle's verdicts on the built-in cases: gpu_backend_cases_test; the
// kernels' index math on the host: gpu_relative_position_math_test.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "fast/learned_position.h"
#include "fast/storage.h"
#include "fast/t5_bias.h"
#include "gpu/api.h"
#include "oracle/core/inputs.h"
#include "tests/support/fast_cases.h"
#include "tests/support/gpu_cases.h"

namespace lmo::gpu {
namespace {

using namespace lmo::testdata;

ref::Tensor values(fast::Storage s, uint64_t seed, const char* name, int64_t n) {
  return oracle::uniform(seed, name, dtype_of(s), {n}, -3.0, 3.0);
}

TEST(GpuPositionArguments, RejectedBeforeAnyCudaCall) {
  const std::vector<float> tokens(4 * 3, 1.0f), positions(5 * 3, 2.0f);
  std::vector<float> h(3 * 3);
  const std::vector<int64_t> ids = {0, 3, 1}, pos = {4, 0, 2};
  expect_rejects(
      [&] {
        learned_position(Storage::f32, tokens.data(), 4, positions.data(), 5,
                         std::vector<int64_t>{0, 4, 1}.data(), pos.data(), h.data(), 3, 3);
      },
      "gpu::learned_position: token_ids[1] is 4");
  expect_rejects(
      [&] {
        learned_position(Storage::f32, tokens.data(), 4, positions.data(), 5, ids.data(),
                         std::vector<int64_t>{-7, 0, 1}.data(), h.data(), 3, 3);
      },
      "positions[0] is -7");
  expect_rejects(
      [&] {
        learned_position(Storage::f32, nullptr, 4, positions.data(), 5, ids.data(), pos.data(),
                         h.data(), 3, 3);
      },
      "token_table is null");
  learned_position(Storage::bf16, nullptr, 4, nullptr, 5, nullptr, nullptr, nullptr, 0, 3);

  const std::vector<float> q(2 * 4, 1.0f), k(3 * 4, 1.0f), rel(3 * 4, 1.0f);
  std::vector<float> e(2 * 3);
  expect_rejects(
      [&] { shaw_logits(Storage::f32, q.data(), k.data(), rel.data(), e.data(), 2, 3, 0, 1); },
      "gpu::shaw_logits: d_k is 0");
  expect_rejects(
      [&] { shaw_logits(Storage::f32, q.data(), k.data(), nullptr, e.data(), 2, 3, 4, 1); },
      "rel_k is null");
  expect_rejects(
      [&] {
        shaw_logits(Storage::f32, q.data(), k.data(), rel.data(), e.data(), int64_t{1} << 30, 3, 4,
                    1);
      },
      "expected < 2^30");

  const std::vector<float> table(32 * 2, 0.5f);
  std::vector<float> bias(2 * 3 * 4);
  const T5BiasShape good{32, 2, 3, 4, false, 128, 0};
  const auto with = [&](auto change) {
    T5BiasShape sh = good;
    change(sh);
    return [=, &table, &bias] { t5_bias(Storage::f32, table.data(), bias.data(), sh); };
  };
  expect_rejects(with([](T5BiasShape& s) { s.heads = 0; }), "gpu::t5_bias: heads is 0");
  expect_rejects(with([](T5BiasShape& s) { s.query_offset = -1; }), "query_offset is -1");
  // T5Buckets' checks, rethrown under gpu::'s name.
  expect_rejects(with([](T5BiasShape& s) { s.max_distance = 16; }), "gpu::t5_bias: max_distance");
  expect_rejects(with([](T5BiasShape& s) { s.num_buckets = 5000; }), "num_buckets is 5000");
  expect_rejects([&] { t5_bias(Storage::f32, nullptr, bias.data(), good); }, "table is null");
}

TEST(GpuLearnedPosition, EqualsFastBitwise) {
  LMO_REQUIRE_GPU();
  const int64_t vocab = 50, max_positions = 40, tokens = 9, d = 61;  // 549 outputs: 3 blocks
  std::vector<int64_t> ids, pos;
  for (int64_t t = 0; t < tokens; ++t) {
    ids.push_back((t * 17 + 3) % vocab);
    pos.push_back((t * 7 + 39) % max_positions);
  }
  for (fast::Storage s : fast::kAllStorages) {
    const ref::Tensor v = values(s, 8400, "token_table", vocab * d);
    const ref::Tensor u = values(s, 8400, "position_table", max_positions * d);
    const size_t bytes = static_cast<size_t>(tokens * d) * fast::storage_bytes(s);
    std::vector<uint8_t> want(bytes), got(bytes);
    fast::learned_position(s, v.bytes().data(), vocab, u.bytes().data(), max_positions, ids.data(),
                           pos.data(), want.data(), tokens, d);
    const auto run = [&] {
      learned_position(gpu_storage(s), v.bytes().data(), vocab, u.bytes().data(), max_positions,
                       ids.data(), pos.data(), got.data(), tokens, d);
      return got;
    };
    EXPECT_TRUE(run() == want) << fast::storage_name(s);
    expect_deterministic(run, std::string(fast::storage_name(s)));
  }
}

TEST(GpuT5Bias, EqualsFastBitwise) {
  LMO_REQUIRE_GPU();
  const std::vector<T5BiasShape> shapes = {
      {32, 3, 17, 40, true, 128, 0},              // bidirectional, every bucket kind
      {32, 2, 5, 300, false, 128, 0},             // causal: keys after the query are bucket 0
      {36, 1, 3, 70, false, 50, 40},              // the boundary float32 code misses
      {32, 2, 1, 600, false, 128, 131071 - 599},  // one decoding query at long context
  };
  for (fast::Storage s : fast::kAllStorages) {
    for (const T5BiasShape& sh : shapes) {
      const std::string where = std::string(fast::storage_name(s)) + " buckets " +
                                std::to_string(sh.num_buckets) + " key_len " +
                                std::to_string(sh.key_len);
      const ref::Tensor table = values(s, 8500, "table", sh.num_buckets * sh.heads);
      const size_t bytes =
          static_cast<size_t>(sh.heads * sh.query_len * sh.key_len) * fast::storage_bytes(s);
      std::vector<uint8_t> want(bytes), got(bytes);
      fast::t5_bias(s, table.bytes().data(), want.data(), sh);
      const auto run = [&] {
        t5_bias(gpu_storage(s), table.bytes().data(), got.data(), sh);
        return got;
      };
      EXPECT_TRUE(run() == want) << where;
      expect_deterministic(run, where);
    }
  }
}

TEST(GpuShawLogits, DeterministicWhereTheClipBites) {
  LMO_REQUIRE_GPU();
  const int64_t n_q = 13, n_k = 29, d_k = 24, max_rel = 4;
  for (fast::Storage s : fast::kAllStorages) {
    const ref::Tensor q = values(s, 8600, "q", n_q * d_k), k = values(s, 8600, "k", n_k * d_k),
                      rel = values(s, 8600, "rel_k", (2 * max_rel + 1) * d_k);
    std::vector<uint8_t> e(static_cast<size_t>(n_q * n_k) * fast::storage_bytes(s));
    expect_deterministic(
        [&] {
          shaw_logits(gpu_storage(s), q.bytes().data(), k.bytes().data(), rel.bytes().data(),
                      e.data(), n_q, n_k, d_k, max_rel);
          return e;
        },
        std::string(fast::storage_name(s)));
  }
}

}  // namespace
}  // namespace lmo::gpu
