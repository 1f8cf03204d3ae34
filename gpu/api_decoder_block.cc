// gpu/api_ffn.h's decoder_block: fast/decoder_block.cc's composition with the GPU's kernels,
// every intermediate an f32 array on the device. The weights are uploaded in their storage and
// widened exactly to f32 on the device, the layout's sublayers run one launch after another
// (gpu/launch.h's rmsnorm, gpu/launch_attention.h's attention, gpu/launch_ffn.h's projections,
// FFN and residual sums, all with f32 storage), and y is converted to the storage once at the end.
// Each launch is waited for before the next (Call::run), so a failing kernel is named.
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "kernels/api/validate_attention.h"
#include "kernels/api/validate_ffn.h"
#include "gpu/api_attention.h"
#include "gpu/api_ffn.h"
#include "gpu/host_call.h"
#include "gpu/launch.h"
#include "gpu/launch_attention.h"
#include "gpu/launch_ffn.h"

namespace lmo::gpu {
namespace {

using detail::bytes_of;
using detail::Call;

// The block's f32 weights on the device and its sublayers on [tokens, d] f32 rows.
class DeviceBlock {
 public:
  DeviceBlock(Call& call, Storage s, const DecoderBlockWeights& w, const DecoderBlockArgs& a)
      : call_(call), s_(s), a_(a), kv_(a.kv_heads * (a.d / a.heads)), n_(a.tokens * a.d) {
    w_q_ = weight(w.w_q, a.d * a.d);
    w_k_ = weight(w.w_k, a.d * kv_);
    w_v_ = weight(w.w_v, a.d * kv_);
    w_o_ = weight(w.w_o, a.d * a.d);
    w1_ = weight(w.w1, a.d * a.d_ff);
    v_ = a.ffn == BlockFfn::swiglu ? weight(w.v, a.d * a.d_ff) : nullptr;
    w2_ = weight(w.w2, a.d_ff * a.d);
    attn_norm_ = weight(w.attn_norm, a.d);
    ffn_norm_ = weight(w.ffn_norm, a.d);
    attn_post_norm_ = weight(w.attn_post_norm, a.d);
    ffn_post_norm_ = weight(w.ffn_post_norm, a.d);
  }

  // Host values in the block's storage, widened to a new f32 device array.
  float* to_f32(const void* host, int64_t n) {
    const void* raw = call_.upload(host, bytes_of(s_, n));
    float* out = floats(n);
    call_.run([=, this] { return launch_convert(s_, raw, Storage::f32, out, n, nullptr); });
    return out;
  }

  // The layout on x (f32 rows on the device), as fast::Block::forward.
  float* forward(const float* x) {
    switch (a_.layout) {
      case BlockLayout::post_ln: {
        const float* x3 = norm(attn_norm_, add(x, attn(x)));
        return norm(ffn_norm_, add(x3, ffn(x3)));
      }
      case BlockLayout::pre_ln: {
        const float* x3 = add(x, attn(norm(attn_norm_, x)));
        return add(x3, ffn(norm(ffn_norm_, x3)));
      }
      case BlockLayout::double_norm: {
        const float* x3 = add(x, norm(attn_post_norm_, attn(norm(attn_norm_, x))));
        return add(x3, norm(ffn_post_norm_, ffn(norm(ffn_norm_, x3))));
      }
      case BlockLayout::olmo2: {
        const float* x3 = add(x, norm(attn_post_norm_, attn(x)));
        return add(x3, norm(ffn_post_norm_, ffn(x3)));
      }
      case BlockLayout::parallel: {
        const float* n = norm(attn_norm_, x);
        return add(add(x, ffn(n)), attn(n));  // (x + FFN) + Attn, the reference's order
      }
    }
    throw std::logic_error("gpu::decoder_block: unknown layout");
  }

 private:
  float* floats(int64_t n) {
    return static_cast<float*>(call_.alloc(static_cast<size_t>(n) * sizeof(float)));
  }

  // A weight the layout reads (null stays null: a norm the layout does not use).
  const float* weight(const void* host, int64_t n) { return host ? to_f32(host, n) : nullptr; }

  // out [tokens, cols] = u [tokens, d] · w [d, cols].
  float* project(const float* u, const float* w, int64_t cols) {
    float* out = floats(a_.tokens * cols);
    call_.run([=, this] { return launch_project_f32(u, w, out, a_.tokens, a_.d, cols, nullptr); });
    return out;
  }

  // Attention(u W_Q, u W_K, u W_V) W_O: causal, scale 1/√(d/h) (fast::decoder_block's).
  float* attn(const float* u) {
    const float* q = project(u, w_q_, a_.d);
    const float* k = project(u, w_k_, kv_);
    const float* v = project(u, w_v_, kv_);
    AttentionArgs c;
    c.heads = a_.heads;
    c.kv_heads = a_.kv_heads;
    c.head_dim = a_.d / a_.heads;
    c.q_len = c.kv_len = a_.tokens;
    c.mask = AttentionMask::causal;
    const float scale =
        kernels::detail::checked_scale("gpu::decoder_block", 0.0f, c.head_dim, "1/√(d/h)");
    float* o = floats(n_);
    float* scratch = call_.alloc_floats(attention_scratch_floats(c));
    call_.run([=, this] {
      return launch_attention(Storage::f32, q, k, v, o, c, scale, scratch, nullptr);
    });
    return project(o, w_o_, a_.d);
  }

  // SwiGLU (SiLU(u W1) ⊙ u V) W2 or GELU(u W1) W2, the hidden layer f32 as in fast::ffn.
  float* ffn(const float* u) {
    float* h = floats(a_.tokens * a_.d_ff);
    float* out = floats(n_);
    const bool glu = a_.ffn == BlockFfn::swiglu;
    call_.run([=, this] {
      return launch_ffn(glu ? Activation::silu : Activation::gelu, Storage::f32, u, w1_,
                        glu ? v_ : nullptr, nullptr, w2_, nullptr, h, out, a_.tokens, a_.d, a_.d_ff,
                        nullptr);
    });
    return out;
  }

  // RMSNorm of u's rows with γ and the block's ε.
  float* norm(const float* gamma, const float* u) {
    float* out = floats(n_);
    call_.run([=, this] {
      return launch_rmsnorm(Storage::f32, u, gamma, out, a_.tokens, a_.d, a_.eps, false, nullptr);
    });
    return out;
  }

  float* add(const float* x, const float* y) {
    float* out = floats(n_);
    call_.run([=, this] { return launch_add_f32(x, y, out, n_, nullptr); });
    return out;
  }

  Call& call_;
  Storage s_;
  DecoderBlockArgs a_;
  int64_t kv_, n_;
  const float *w_q_ = nullptr, *w_k_ = nullptr, *w_v_ = nullptr, *w_o_ = nullptr;
  const float *w1_ = nullptr, *v_ = nullptr, *w2_ = nullptr;
  const float *attn_norm_ = nullptr, *ffn_norm_ = nullptr, *attn_post_norm_ = nullptr,
              *ffn_post_norm_ = nullptr;
};

}  // namespace

void decoder_block(Storage s, const void* x, const DecoderBlockWeights& w, void* y,
                   const DecoderBlockArgs& a) {
  constexpr const char* fn = "gpu::decoder_block";
  kernels::detail::check_decoder_block_args(
      fn, [&] { detail::check_storage(fn, s); }, x, w, y, a);
  if (a.d / a.heads > kGpuAttentionMaxDim) {
    throw std::invalid_argument(std::string(fn) + ": d/heads is " + std::to_string(a.d / a.heads) +
                                ", expected <= " + std::to_string(kGpuAttentionMaxDim) +
                                " (the GPU attention kernel's limit)");
  }
  if (a.tokens == 0) return;
  // Only the layout's norms are read (fast::decoder_block's rule): the others are not uploaded.
  DecoderBlockWeights used = w;
  used.attn_norm = used.ffn_norm = used.attn_post_norm = used.ffn_post_norm = nullptr;
  for (const auto& [name, p] : kernels::detail::layout_norms(w, a.layout)) {
    const std::string n(name);
    if (n == "attn_norm") used.attn_norm = p;
    if (n == "ffn_norm") used.ffn_norm = p;
    if (n == "attn_post_norm") used.attn_post_norm = p;
    if (n == "ffn_post_norm") used.ffn_post_norm = p;
  }
  const int64_t n = a.tokens * a.d;
  Call call(fn);
  DeviceBlock block(call, s, used, a);
  const float* x32 = block.to_f32(x, n);
  const float* y32 = block.forward(x32);
  void* dy = call.alloc(bytes_of(s, n));
  call.run([=] { return launch_convert(Storage::f32, y32, s, dy, n, nullptr); });
  call.download(y, dy, bytes_of(s, n));
  call.finish();
}

}  // namespace lmo::gpu
