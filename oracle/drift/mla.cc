// mla-absorption: F19 MLA in its naive form (decompress k^C, v^C, run MHA) and its absorbed form
// (W^UK folded into the query, W^UV into W^O, attention over the cached latents), equal in
// exact arithmetic (C21), against the sequence length. In a narrow format they are not equal:
// absorption rounds the products W^UV_i W^O_i and q^C W^UK_iᵀ to the format and attends over
// d_c-wide latents instead of d_h-wide heads, so each form carries its own error.
#include <cmath>
#include <string>

#include "oracle/drift/support.h"
#include "reference/mla.h"

namespace lmo::oracle::drift {
namespace {

using ref::bfloat16;
using ref::Format;
using ref::Mat;

struct Inputs {
  std::vector<double> h, dq, uq, qr, dkv, uk, kr, uv, o;
};

template <class T>
Mat<T> mat(const std::vector<double>& v, int64_t rows, int64_t cols) {
  return Mat<T>(rows, cols, as<T>(v));
}

template <class T>
ref::MlaWeights<T> weights(const Inputs& in, const ref::MlaConfig& c) {
  const int64_t d = c.model_dim, hq = c.heads * c.head_dim, hr = c.heads * c.rope_dim;
  return {mat<T>(in.dq, d, c.q_latent_dim),   mat<T>(in.uq, c.q_latent_dim, hq),
          mat<T>(in.qr, c.q_latent_dim, hr),  mat<T>(in.dkv, d, c.kv_latent_dim),
          mat<T>(in.uk, c.kv_latent_dim, hq), mat<T>(in.kr, d, c.rope_dim),
          mat<T>(in.uv, c.kv_latent_dim, hq), mat<T>(in.o, hq, d)};
}

template <class T, class Acc>
void both_forms(const Inputs& in, int64_t t, const ref::MlaConfig& c, const std::vector<mp>& exact,
                DriftAccumulator& naive, DriftAccumulator& absorbed) {
  const ref::MlaWeights<T> w = weights<T>(in, c);
  const Mat<T> h = mat<T>(in.h, t, c.model_dim);
  add_all(naive, exact, ref::mla_naive<T, Acc>(h, w, c).u.data);
  add_all(absorbed, exact, ref::mla_absorbed<T, Acc>(h, ref::mla_absorb<T, Acc>(w, c), c).u.data);
}

// Uniform in ±√(3/fan_in): unit-variance outputs from unit-variance inputs.
std::vector<double> weight(uint64_t seed, const std::string& name, int64_t rows, int64_t cols) {
  const double a = std::sqrt(3.0 / static_cast<double>(rows));
  return bf16_uniform(seed, "mla." + name, rows * cols, -a, a);
}

// The audited model and the sweep of sequence lengths, shared by the run and its cost.
ref::MlaConfig audit_config() {
  ref::MlaConfig c;
  c.model_dim = 64;
  c.heads = 2;
  c.head_dim = 16;
  c.rope_dim = 8;
  c.kv_latent_dim = 32;
  c.q_latent_dim = 32;
  return c;
}
std::vector<int64_t> length_sweep(const DriftOptions& o) {
  return doubling(16, o.quick ? 64 : 256);
}

}  // namespace

DriftResult mla_absorption(const DriftOptions& o, const DriftProgress& progress) {
  DriftResult r;
  r.op = "mla_naive, mla_absorbed (F19)";
  const ref::MlaConfig c = audit_config();
  const std::vector<int64_t> lengths = length_sweep(o);
  r.x_label = "sequence length";
  r.description =
      "Error of MLA's output u (every position of one causal sequence; d = 64, 2 heads, d_h = "
      "16, d_h^R = 8, d_c = d_c' = 32, h uniform in [-1, 1), weights uniform in ±√(3/fan-in)) "
      "against the exact value (both forms are equal exactly, C21), for sequence lengths 16 … " +
      std::to_string(lengths.back()) +
      ". Compare the naive and absorbed lines of one precision: the gap is what absorption "
      "costs (or saves) in that format.";
  r.panels = {"causal, 2 heads"};
  const std::string& panel = r.panels[0];
  ResultBuilder b(r);
  b.policy("naive bf16/bf16/f32", "naive form, bf16 arithmetic, f32 sums");
  b.policy("absorbed bf16/bf16/f32", "absorbed form (W^UV W^O and q^C W^UKᵀ in bf16), f32 sums");
  b.policy("naive bf16/bf16/bf16", "naive form, all bf16");
  b.policy("absorbed bf16/bf16/bf16", "absorbed form, all bf16");
  b.policy("naive f32", "naive form in f32");
  b.policy("absorbed f32", "absorbed form in f32");
  r.notes.push_back("fast policy: no fast MLA kernel exists (fast/ has none)");

  const int64_t d = c.model_dim, hq = c.heads * c.head_dim, hr = c.heads * c.rope_dim;
  Inputs in;
  in.dq = weight(o.seed, "w_dq", d, c.q_latent_dim);
  in.uq = weight(o.seed, "w_uq", c.q_latent_dim, hq);
  in.qr = weight(o.seed, "w_qr", c.q_latent_dim, hr);
  in.dkv = weight(o.seed, "w_dkv", d, c.kv_latent_dim);
  in.uk = weight(o.seed, "w_uk", c.kv_latent_dim, hq);
  in.kr = weight(o.seed, "w_kr", d, c.rope_dim);
  in.uv = weight(o.seed, "w_uv", c.kv_latent_dim, hq);
  in.o = weight(o.seed, "w_o", hq, d);
  const ref::MlaWeights<mp> w_mp = weights<mp>(in, c);
  const ref::MlaWeights<ref::Ball> w_ball = weights<ref::Ball>(in, c);
  int64_t done = 0;
  for (int64_t t : lengths) {
    progress(done++, static_cast<int64_t>(lengths.size()), "length " + std::to_string(t));
    in.h = bf16_uniform(o.seed, "mla.h." + std::to_string(t), t * d, -1, 1);
    const std::vector<mp> exact = exact_values([&]<class T>() {
      if constexpr (std::is_same_v<T, mp>) {
        return ref::mla_naive<T>(mat<T>(in.h, t, d), w_mp, c).u.data;
      } else {
        return ref::mla_naive<T>(mat<T>(in.h, t, d), w_ball, c).u.data;
      }
    });
    DriftAccumulator nbf(Format::bf16), abf(Format::bf16), nbb(Format::bf16), abb(Format::bf16),
        nff(Format::f32), aff(Format::f32);
    both_forms<bfloat16, float>(in, t, c, exact, nbf, abf);
    both_forms<bfloat16, bfloat16>(in, t, c, exact, nbb, abb);
    both_forms<float, float>(in, t, c, exact, nff, aff);
    const double xv = static_cast<double>(t);
    b.add(panel, "naive bf16/bf16/f32", xv, nbf);
    b.add(panel, "absorbed bf16/bf16/f32", xv, abf);
    b.add(panel, "naive bf16/bf16/bf16", xv, nbb);
    b.add(panel, "absorbed bf16/bf16/bf16", xv, abb);
    b.add(panel, "naive f32", xv, nff);
    b.add(panel, "absorbed f32", xv, aff);
  }
  b.finish();
  return r;
}

double mla_absorption_cost(const DriftOptions& o) {
  // Per length t, the exact naive form: the projections (two operations per weight per token)
  // and causal attention over t(t + 1)/2 query–key pairs per head (a dot product of
  // d_h + d_h^R, a weighted sum of d_h).
  const ref::MlaConfig c = audit_config();
  const double hq = static_cast<double>(c.heads * c.head_dim);
  const double hr = static_cast<double>(c.heads * c.rope_dim);
  const double weights_per_token =
      static_cast<double>(c.model_dim) * (c.q_latent_dim + c.kv_latent_dim + c.rope_dim) +
      static_cast<double>(c.q_latent_dim) * (hq + hr) + c.kv_latent_dim * 2.0 * hq +
      hq * static_cast<double>(c.model_dim);
  const double per_pair = 2.0 * static_cast<double>(2 * c.head_dim + c.rope_dim) + 3.0;
  double sum = 0;
  for (int64_t t : length_sweep(o)) {
    const double td = static_cast<double>(t);
    sum += td * 2.0 * weights_per_token + c.heads * td * (td + 1) / 2 * per_pair;
  }
  return sum;
}

}  // namespace lmo::oracle::drift
