// A shape for the reference-only attention tests (attention_enclosure_test, attention_f32_test):
// sizes, mask and the scales of the seeded inputs, and the reference's AttentionConfig for it.
// (tests/support/attention_inputs.h is the kernels' counterpart, on the kernel argument types.)
#pragma once

#include <cstdint>
#include <string>

#include "reference/attention.h"
#include "tests/support/splitmix.h"

namespace lmo::testdata {

struct RefAttentionShape {
  std::string name;
  int64_t tq, tk, h, g, d, dv;
  ref::MaskKind mask;
  int64_t window = 0;
  double qk_scale = 1;  // the spread of q and k
  bool subtract_max = true;
  double v_scale = 1;   // the spread of v
  double soft_cap = 0;  // cap·tanh(s/cap) on the logits; 0: none
};

// The config of s; a document mask splits the keys into documents [0, 29), [29, 61), [61, …).
inline ref::AttentionConfig ref_attention_config(const RefAttentionShape& s) {
  ref::AttentionConfig c;
  c.heads = s.h;
  c.kv_heads = s.g;
  c.head_dim = s.d;
  c.value_dim = s.dv;
  c.mask = s.mask;
  c.window = s.window;
  c.subtract_max = s.subtract_max;
  if (s.soft_cap > 0) c.soft_cap = ref::mp(s.soft_cap);
  if (s.mask == ref::MaskKind::kDocument) {
    c.document_ids.assign(static_cast<size_t>(s.tk), 0);
    for (int64_t j = 0; j < s.tk; ++j)
      c.document_ids[static_cast<size_t>(j)] = j < 29 ? 0 : (j < 61 ? 1 : 2);
  }
  return c;
}

// rows × cols float values, roughly normal (a sum of three uniforms), times scale, as T.
template <class T>
ref::Mat<T> ref_attention_values(int64_t rows, int64_t cols, double scale, uint64_t seed) {
  testing::SplitMix64 s{seed};
  ref::Mat<T> m(rows, cols);
  for (T& x : m.data) {
    const double u = s.unit() + s.unit() + s.unit() - 1.5;
    x = T(static_cast<double>(static_cast<float>(2 * u * scale)));
  }
  return m;
}

}  // namespace lmo::testdata
