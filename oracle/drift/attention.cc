// attention-length: F15 attention and F17 online (FlashAttention-style) attention against the
// number of keys, for query rows that see every key (decoding at the end of a long context).
// The softmax denominator and the P·V products are sums over the keys: accumulated in bf16/f16
// they stagnate as the sequence grows; accumulated in f32 they do not, whether the softmax is
// evaluated naively or online over key tiles.
#include <string>

#include "oracle/drift/support.h"
#include "reference/attention.h"
#include "reference/attention_online.h"

namespace lmo::oracle::drift {
namespace {

using ref::bfloat16;
using ref::float16;
using ref::Format;
using ref::Mat;

constexpr int64_t kTile = 128;  // key tile of the online policies (FlashAttention's block size)
// The sweep, shared by the run and its cost: kHeadDim, query rows, numbers of keys.
constexpr int64_t kHeadDim = 64;
int64_t query_rows(const DriftOptions& o) { return o.quick ? 1 : 2; }
std::vector<int64_t> key_sweep(const DriftOptions& o) {
  return doubling(128, o.quick ? 1024 : 16384);
}

template <class T>
Mat<T> mat(const std::vector<double>& v, int64_t rows, int64_t cols) {
  return Mat<T>(rows, cols, as<T>(v));
}

template <class T, class Acc>
void naive(const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v,
           int64_t tq, int64_t t, const ref::AttentionConfig& cfg, const std::vector<mp>& exact,
           DriftAccumulator& a) {
  const int64_t d = cfg.head_dim;
  add_all(a, exact,
          ref::attention<T, Acc>(mat<T>(q, tq, d), mat<T>(k, t, d), mat<T>(v, t, d), cfg).data);
}

template <class T, class Acc>
void online(const std::vector<double>& q, const std::vector<double>& k,
            const std::vector<double>& v, int64_t tq, int64_t t, const ref::AttentionConfig& cfg,
            const std::vector<mp>& exact, DriftAccumulator& a) {
  const int64_t d = cfg.head_dim;
  add_all(
      a, exact,
      ref::attention_tiled<T, Acc>(mat<T>(q, tq, d), mat<T>(k, t, d), mat<T>(v, t, d), cfg, kTile)
          .data);
}

}  // namespace

DriftResult attention_length(const DriftOptions& o, const DriftProgress& progress) {
  DriftResult r;
  r.op = "attention (F15), online attention (F17)";
  const int64_t d = kHeadDim;
  const int64_t tq = query_rows(o);
  const std::vector<int64_t> lengths = key_sweep(o);
  r.x_label = "keys";
  r.description =
      "Error of " + std::to_string(tq) +
      " query row(s) attending to every one of T keys (one "
      "head, d = 64; q in [-2, 2), k in [-1, 1), v in [0.5, 1.5) so that outputs stay near 1) "
      "against exact attention, for T = 128 … " +
      std::to_string(lengths.back()) +
      ". Naive: the softmax over all T logits, then P·V; online: FlashAttention's running max "
      "and sums over key tiles of 128. Sums over the keys in bf16/f16 stagnate as T grows; f32 "
      "sums stay flat for both schemes.";
  r.panels = {"one head, d = 64"};
  const std::string& panel = r.panels[0];
  ResultBuilder b(r);
  b.policy("naive bf16/f32/f32", "bf16 inputs and outputs, f32 arithmetic and sums");
  b.policy("naive bf16/bf16/f32",
           "bf16 arithmetic (logits' products, exp, P·V products), f32 sums");
  b.policy("naive bf16/bf16/bf16", "all bf16, sums in bf16");
  b.policy("naive f16/f16/f16", "all f16, sums in f16");
  b.policy("online bf16/bf16/f32", "online softmax over tiles of 128, bf16 arithmetic, f32 sums");
  b.policy("online bf16/bf16/bf16", "online softmax over tiles of 128, all bf16");
  b.policy("online f32/f32/f32", "online softmax over tiles of 128 in f32, output f32");
  r.notes.push_back("fast policy: no fast attention kernel exists (fast/ has none)");

  ref::AttentionConfig cfg;
  cfg.head_dim = d;
  int64_t done = 0;
  for (int64_t t : lengths) {
    progress(done++, static_cast<int64_t>(lengths.size()), "keys " + std::to_string(t));
    const std::string key = "attention." + std::to_string(t);
    const std::vector<double> q = bf16_uniform(o.seed, key + ".q", tq * d, -2, 2);
    const std::vector<double> k = bf16_uniform(o.seed, key + ".k", t * d, -1, 1);
    const std::vector<double> v = bf16_uniform(o.seed, key + ".v", t * d, 0.5, 1.5);
    const std::vector<mp> exact = exact_values([&]<class T>() {
      return ref::attention<T>(mat<T>(q, tq, d), mat<T>(k, t, d), mat<T>(v, t, d), cfg).data;
    });
    DriftAccumulator nff(Format::bf16), nbf(Format::bf16), nbb(Format::bf16), nhh(Format::f16),
        obf(Format::bf16), obb(Format::bf16), off(Format::f32);
    naive<float, float>(q, k, v, tq, t, cfg, exact, nff);
    naive<bfloat16, float>(q, k, v, tq, t, cfg, exact, nbf);
    naive<bfloat16, bfloat16>(q, k, v, tq, t, cfg, exact, nbb);
    naive<float16, float16>(q, k, v, tq, t, cfg, exact, nhh);
    online<bfloat16, float>(q, k, v, tq, t, cfg, exact, obf);
    online<bfloat16, bfloat16>(q, k, v, tq, t, cfg, exact, obb);
    online<float, float>(q, k, v, tq, t, cfg, exact, off);
    const double xv = static_cast<double>(t);
    b.add(panel, "naive bf16/f32/f32", xv, nff);
    b.add(panel, "naive bf16/bf16/f32", xv, nbf);
    b.add(panel, "naive bf16/bf16/bf16", xv, nbb);
    b.add(panel, "naive f16/f16/f16", xv, nhh);
    b.add(panel, "online bf16/bf16/f32", xv, obf);
    b.add(panel, "online bf16/bf16/bf16", xv, obb);
    b.add(panel, "online f32/f32/f32", xv, off);
  }
  b.finish();
  return r;
}

double attention_length_cost(const DriftOptions& o) {
  // Per number of keys T: each query row's exact attention takes T dot products of d (2d
  // operations), T exponentials, sums and quotients (~3T) and P·V (2d per key).
  double sum = 0;
  for (int64_t v : key_sweep(o)) sum += static_cast<double>(v);
  return static_cast<double>(query_rows(o)) * (4.0 * kHeadDim + 3.0) * sum;
}

}  // namespace lmo::oracle::drift
