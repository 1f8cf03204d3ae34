// Entry point of fast/decoder_block.h: the layouts composed from the fast kernels' public entry
// points, each called with f32 storage on f32 intermediates (ScopedTarget's choice of target
// reaches them through their own dynamic dispatch), and one conversion to the storage format at
// the end. Nothing here is per-target code: the residual additions are single IEEE additions,
// the same on every target.
#include "fast/decoder_block.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "fast/attention.h"
#include "fast/blas.h"
#include "fast/convert.h"
#include "fast/f32_operand.h"
#include "fast/ffn.h"
#include "fast/norms.h"
#include "fast/threads.h"
#include "fast/kernel_api.h"

namespace lmo::fast {

namespace {

// Token rows per projection product: a constant, so the tiling (and OpenBLAS's summation order
// per tile) depends on the shapes alone, never on the thread count.
constexpr int64_t kProjectionRows = 32;

using Buf = std::vector<float>;

// The block's shapes and f32 weights, and the sublayers on [tokens, d] f32 rows.
class Block {
 public:
  Block(Storage s, const DecoderBlockWeights& w, const DecoderBlockArgs& a)
      : a_(a),
        kv_(a.kv_heads * (a.d / a.heads)),
        n_(a.tokens * a.d),
        w_q_(s, w.w_q, a.d * a.d),
        w_k_(s, w.w_k, a.d * kv_),
        w_v_(s, w.w_v, a.d * kv_),
        w_o_(s, w.w_o, a.d * a.d),
        w1_(s, w.w1, a.d * a.d_ff),
        v_(s, w.v, a.ffn == BlockFfn::swiglu ? a.d * a.d_ff : 0),
        w2_(s, w.w2, a.d_ff * a.d),
        attn_norm_(s, w.attn_norm, w.attn_norm ? a.d : 0),
        ffn_norm_(s, w.ffn_norm, w.ffn_norm ? a.d : 0),
        attn_post_norm_(s, w.attn_post_norm, w.attn_post_norm ? a.d : 0),
        ffn_post_norm_(s, w.ffn_post_norm, w.ffn_post_norm ? a.d : 0) {}

  Buf buf() const { return Buf(static_cast<size_t>(n_)); }

  // Attention(u W_Q, u W_K, u W_V) W_O.
  Buf attn(const Buf& u) const {
    Buf q = buf(), k(static_cast<size_t>(a_.tokens * kv_)), v(k.size()), o = buf(), out = buf();
    project(u.data(), w_q_.get(), q.data(), a_.d);
    project(u.data(), w_k_.get(), k.data(), kv_);
    project(u.data(), w_v_.get(), v.data(), kv_);
    AttentionArgs c;
    c.heads = a_.heads;
    c.kv_heads = a_.kv_heads;
    c.head_dim = a_.d / a_.heads;
    c.q_len = c.kv_len = a_.tokens;
    c.mask = AttentionMask::causal;
    attention(Storage::f32, q.data(), k.data(), v.data(), o.data(), c);
    project(o.data(), w_o_.get(), out.data(), a_.d);
    return out;
  }

  Buf ffn(const Buf& u) const {
    Buf out = buf();
    if (a_.ffn == BlockFfn::swiglu) {
      glu_ffn(Activation::silu, Storage::f32, u.data(), w1_.get(), v_.get(), w2_.get(), out.data(),
              a_.tokens, a_.d, a_.d_ff);
    } else {
      fast::ffn(Activation::gelu, Storage::f32, u.data(), w1_.get(), nullptr, w2_.get(), nullptr,
                out.data(), a_.tokens, a_.d, a_.d_ff);
    }
    return out;
  }

  // RMSNorm of u's rows with γ.
  Buf norm(const detail::F32Operand& gamma, const Buf& u) const {
    Buf out = buf();
    rmsnorm(Storage::f32, u.data(), gamma.get(), out.data(), a_.tokens, a_.d, a_.eps);
    return out;
  }

  static Buf add(const Buf& a, const Buf& b) {
    Buf out(a.size());
    for (size_t i = 0; i < a.size(); ++i) out[i] = a[i] + b[i];
    return out;
  }

  // The layout on x (f32 rows).
  Buf forward(const Buf& x) const {
    switch (a_.layout) {
      case BlockLayout::post_ln: {
        const Buf x3 = norm(attn_norm_, add(x, attn(x)));
        return norm(ffn_norm_, add(x3, ffn(x3)));
      }
      case BlockLayout::pre_ln: {
        const Buf x3 = add(x, attn(norm(attn_norm_, x)));
        return add(x3, ffn(norm(ffn_norm_, x3)));
      }
      case BlockLayout::double_norm: {
        const Buf x3 = add(x, norm(attn_post_norm_, attn(norm(attn_norm_, x))));
        return add(x3, norm(ffn_post_norm_, ffn(norm(ffn_norm_, x3))));
      }
      case BlockLayout::olmo2: {
        const Buf x3 = add(x, norm(attn_post_norm_, attn(x)));
        return add(x3, norm(ffn_post_norm_, ffn(x3)));
      }
      case BlockLayout::parallel: {
        const Buf n = norm(attn_norm_, x);
        return add(add(x, ffn(n)), attn(n));  // (x + FFN) + Attn, the reference's order
      }
    }
    throw std::logic_error("decoder_block: unknown layout");
  }

 private:
  // out [tokens, cols] = u [tokens, d] · w [d, cols], in row tiles of kProjectionRows.
  void project(const float* u, const float* w, float* out, int64_t cols) const {
    parallel_for(a_.tokens, kProjectionRows, [&](int64_t begin, int64_t end) {
      sgemm(end - begin, cols, a_.d, 1.0f, u + begin * a_.d, a_.d, w, cols, false, 0.0f,
            out + begin * cols, cols);
    });
  }

  DecoderBlockArgs a_;
  int64_t kv_, n_;
  detail::F32Operand w_q_, w_k_, w_v_, w_o_, w1_, v_, w2_;
  detail::F32Operand attn_norm_, ffn_norm_, attn_post_norm_, ffn_post_norm_;
};

}  // namespace

void decoder_block(Storage s, const void* x, const DecoderBlockWeights& w, void* y,
                   const DecoderBlockArgs& a) {
  const char* fn = "decoder_block";
  detail::check_decoder_block_args(
      fn, [&] { detail::check_storage(fn, s); }, x, w, y, a);
  if (a.tokens == 0) return;
  blas_single_threaded();
  const Block block(s, w, a);
  const int64_t n = a.tokens * a.d;
  Buf xf(static_cast<size_t>(n));
  convert(s, x, Storage::f32, xf.data(), n);
  const Buf out = block.forward(xf);
  convert(Storage::f32, out.data(), s, y, n);
}

}  // namespace lmo::fast
