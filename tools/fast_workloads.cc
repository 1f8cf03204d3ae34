#include "fast_workloads.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "fast/activations.h"
#include "fast/convert.h"
#include "fast/cross_entropy.h"
#include "fast/fp8.h"
#include "fast/glu.h"
#include "fast/norms.h"
#include "fast/rope.h"
#include "fast/softcap.h"
#include "fast/softmax.h"

namespace lmo::tools {
namespace {

using fast::Storage;

// An array of n elements in storage s, filled with a fixed pattern in [-2, 2)·scale (the values
// do not change the traffic; they only have to be ordinary numbers: no subnormals, infinities or
// NaN; a kernel with a value-dependent path, as soft-capping, gets a scale that reaches it).
struct Array {
  Array(Storage s, int64_t n, uint32_t salt, float scale = 1.0f)
      : bytes(static_cast<size_t>(n) * fast::storage_bytes(s)) {
    std::vector<float> f(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t h = (static_cast<uint32_t>(i) + salt) * 2654435761u;
      f[static_cast<size_t>(i)] = (static_cast<float>(h >> 20) / 1024.0f - 2.0f) * scale;
    }
    fast::convert(Storage::f32, f.data(), s, bytes.data(), n);
  }
  void* data() { return bytes.data(); }
  std::vector<unsigned char> bytes;
};

struct Arrays {
  std::vector<Array> a;
  std::vector<int64_t> targets, positions;
  std::vector<float> row_f32_a, row_f32_b;
};

int64_t width(Storage s) { return static_cast<int64_t>(fast::storage_bytes(s)); }

Workload norm(Storage s, int64_t elements, bool layer) {
  const int64_t d = 4096, rows = std::max<int64_t>(1, elements / d);
  auto bufs = std::make_shared<Arrays>();
  bufs->a.emplace_back(s, rows * d, 1);  // x
  bufs->a.emplace_back(s, d, 2);         // gamma
  bufs->a.emplace_back(s, d, 3);         // beta
  bufs->a.emplace_back(s, rows * d, 4);  // y
  Arrays* b = bufs.get();
  Workload w;
  w.op = layer ? "layernorm" : "rmsnorm";
  w.shape = std::to_string(rows) + "x" + std::to_string(d);
  w.elements = rows * d;
  w.bytes = (2 * rows * d + (layer ? 2 : 1) * d) * width(s);
  w.run = layer
              ? std::function<void()>([b, s, rows, d] {
                  fast::layernorm(s, b->a[0].data(), b->a[1].data(), b->a[2].data(), b->a[3].data(),
                                  rows, d, 1e-5f);
                })
              : std::function<void()>([b, s, rows, d] {
                  fast::rmsnorm(s, b->a[0].data(), b->a[1].data(), b->a[3].data(), rows, d, 1e-6f);
                });
  w.buffers = bufs;
  return w;
}

Workload softmax(Storage s, int64_t elements) {
  const int64_t n = 32768, rows = std::max<int64_t>(1, elements / n);
  auto bufs = std::make_shared<Arrays>();
  bufs->a.emplace_back(s, rows * n, 5);
  bufs->a.emplace_back(s, rows * n, 6);
  Arrays* b = bufs.get();
  Workload w;
  w.op = "softmax";
  w.shape = std::to_string(rows) + "x" + std::to_string(n);
  w.elements = rows * n;
  w.bytes = 2 * rows * n * width(s);
  w.run = [b, s, rows, n] { fast::softmax(s, b->a[0].data(), b->a[1].data(), rows, n); };
  w.buffers = bufs;
  return w;
}

// Llama 3's vocabulary; z-loss 1e-4 (PaLM) and Gemma 2's final soft-cap 30: the fused pass with
// every term switched on.
Workload cross_entropy(Storage s, int64_t elements) {
  const int64_t vocab = 128256, rows = std::max<int64_t>(1, elements / vocab);
  auto bufs = std::make_shared<Arrays>();
  bufs->a.emplace_back(s, rows * vocab, 7);  // logits
  bufs->a.emplace_back(s, rows * vocab, 8);  // gradient
  for (int64_t r = 0; r < rows; ++r) bufs->targets.push_back((r * 7919) % vocab);
  bufs->row_f32_a.resize(static_cast<size_t>(rows));
  bufs->row_f32_b.resize(static_cast<size_t>(rows));
  Arrays* b = bufs.get();
  Workload w;
  w.op = "cross_entropy";
  w.shape = std::to_string(rows) + "x" + std::to_string(vocab);
  w.elements = rows * vocab;
  // Logits in, gradient out, plus the targets in and loss and log Z out per row.
  w.bytes = 2 * rows * vocab * width(s) + rows * (8 + 4 + 4);
  w.run = [b, s, rows, vocab] {
    fast::cross_entropy(s, b->a[0].data(), b->targets.data(), rows, vocab, 1e-4f, 30.0f,
                        b->row_f32_a.data(), b->row_f32_b.data(), b->a[1].data());
  };
  w.buffers = bufs;
  return w;
}

// Llama 3.1 8B's query heads (32 × 128, base 500000, the Llama 3.1 rule, half-split pairs) at
// positions below its 128K context. rope forms the angles from the positions (one cos and sin per
// token and pair, shared by the 32 heads); rope_table reads them from an f32 cos/sin table row
// per token instead.
Workload rope(Storage s, int64_t elements, bool from_table) {
  const int64_t heads = 32, head_dim = 128, row = heads * head_dim;
  const int64_t tokens = std::max<int64_t>(1, elements / row);
  auto bufs = std::make_shared<Arrays>();
  bufs->a.emplace_back(s, tokens * row, 14);                                  // x
  bufs->a.emplace_back(s, tokens * row, 15);                                  // y
  if (from_table) bufs->a.emplace_back(Storage::f32, tokens * head_dim, 16);  // cos_sin
  for (int64_t t = 0; t < tokens; ++t) bufs->positions.push_back((t * 7919) % 131072);
  Arrays* b = bufs.get();
  const fast::RopeShape shape{tokens, heads, head_dim, head_dim, fast::RopeLayout::half_split};
  fast::RopeFrequencies f;
  f.base = 500000;
  f.scaling = fast::RopeScaling::llama31;
  f.factor = 8;
  f.original_context = 8192;
  Workload w;
  w.op = from_table ? "rope_table" : "rope";
  w.shape = std::to_string(tokens) + "x" + std::to_string(heads) + "x" + std::to_string(head_dim);
  w.elements = tokens * row;
  // x in, y out, and per token its position (rope) or its table row of r f32 values.
  w.bytes = 2 * tokens * row * width(s) + tokens * (from_table ? head_dim * 4 : 8);
  if (from_table) {
    w.run = [b, s, shape] {
      fast::rope_table(s, b->a[0].data(), Storage::f32, b->a[2].data(), b->a[1].data(), shape);
    };
  } else {
    w.run = [b, s, shape, f] {
      fast::rope(s, b->a[0].data(), b->positions.data(), b->a[1].data(), shape, f);
    };
  }
  w.buffers = bufs;
  return w;
}

Workload glu(Storage s, int64_t elements, fast::Activation act, const char* name) {
  auto bufs = std::make_shared<Arrays>();
  bufs->a.emplace_back(s, elements, 9);
  bufs->a.emplace_back(s, elements, 10);
  bufs->a.emplace_back(s, elements, 11);
  Arrays* b = bufs.get();
  Workload w;
  w.op = name;
  w.shape = std::to_string(elements);
  w.elements = elements;
  w.bytes = 3 * elements * width(s);
  w.run = [b, s, elements, act] {
    fast::glu_gate(act, s, b->a[0].data(), b->a[1].data(), b->a[2].data(), elements);
  };
  w.buffers = bufs;
  return w;
}

// Soft-capping at 30. `softcap`: inputs in [-2, 2), where the kernel skips the exponential (every
// |z| of a vector below 0.625·cap); `softcap_wide`: inputs in [-60, 60) (±2·cap), where nearly
// every vector takes it, the cost of capping real logits.
Workload softcap(Storage s, int64_t elements, bool wide) {
  constexpr float kCap = 30.0f;
  auto bufs = std::make_shared<Arrays>();
  bufs->a.emplace_back(s, elements, 12, wide ? kCap : 1.0f);
  bufs->a.emplace_back(s, elements, 13);
  Arrays* b = bufs.get();
  Workload w;
  w.op = wide ? "softcap_wide" : "softcap";
  w.shape = std::to_string(elements);
  w.elements = elements;
  w.bytes = 2 * elements * width(s);
  w.run = [b, s, elements] { fast::softcap(s, b->a[0].data(), b->a[1].data(), elements, kCap); };
  w.buffers = bufs;
  return w;
}

// DeepSeek-V3's activation quantization: rows of 7168 in 1×128 groups to E4M3 and f32 scales
// (fp8_quantize), and back (fp8_dequantize).
Workload fp8(Storage s, int64_t elements, bool quantize) {
  const int64_t d = 7168, group = 128, rows = std::max<int64_t>(1, elements / d);
  const int64_t scales = rows * (d / group);
  auto bufs = std::make_shared<Arrays>();
  bufs->a.emplace_back(s, rows * d, 11);  // x
  bufs->row_f32_a.assign(static_cast<size_t>(scales), 0.0f);
  auto q = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(rows * d));
  Arrays* b = bufs.get();
  const fast::Fp8Tiling t{rows, d, 1, group};
  // Dequantization reads what quantization writes.
  fast::fp8_quantize(s, b->a[0].data(), q->data(), b->row_f32_a.data(), t, fast::Fp8Format::e4m3,
                     false, 1e-10);
  Workload w;
  w.op = quantize ? "fp8_quantize" : "fp8_dequantize";
  w.shape = std::to_string(rows) + "x" + std::to_string(d);
  w.elements = rows * d;
  w.bytes = rows * d * (width(s) + 1) + scales * 4;
  if (quantize) {
    w.run = [b, q, s, t] {
      fast::fp8_quantize(s, b->a[0].data(), q->data(), b->row_f32_a.data(), t,
                         fast::Fp8Format::e4m3, false, 1e-10);
    };
  } else {
    w.run = [b, q, s, t] {
      fast::fp8_dequantize(s, q->data(), b->row_f32_a.data(), b->a[0].data(), t,
                           fast::Fp8Format::e4m3);
    };
  }
  w.buffers = bufs;
  return w;
}

}  // namespace

const std::vector<std::string>& fast_workload_ops() {
  static const std::vector<std::string> ops = {
      "rmsnorm",    "layernorm",    "softmax",      "cross_entropy", "rope",
      "rope_table", "swiglu_gate",  "geglu_gate",   "reglu_gate",    "geglu_tanh_gate",
      "softcap",    "softcap_wide", "fp8_quantize", "fp8_dequantize"};
  return ops;
}

Workload fast_workload(const std::string& op, Storage s, int64_t elements) {
  if (op == "rmsnorm") return norm(s, elements, false);
  if (op == "layernorm") return norm(s, elements, true);
  if (op == "softmax") return softmax(s, elements);
  if (op == "cross_entropy") return cross_entropy(s, elements);
  if (op == "rope") return rope(s, elements, false);
  if (op == "rope_table") return rope(s, elements, true);
  if (op == "swiglu_gate") return glu(s, elements, fast::Activation::silu, "swiglu_gate");
  if (op == "geglu_gate") return glu(s, elements, fast::Activation::gelu, "geglu_gate");
  if (op == "reglu_gate") return glu(s, elements, fast::Activation::relu, "reglu_gate");
  if (op == "geglu_tanh_gate") {
    return glu(s, elements, fast::Activation::gelu_tanh, "geglu_tanh_gate");
  }
  if (op == "softcap") return softcap(s, elements, false);
  if (op == "softcap_wide") return softcap(s, elements, true);
  if (op == "fp8_quantize") return fp8(s, elements, true);
  if (op == "fp8_dequantize") return fp8(s, elements, false);
  throw std::invalid_argument("fast_workload: no workload named " + op);
}

Workload fast_workload_in_cache(const std::string& op, Storage s, int64_t elements,
                                int64_t max_bytes) {
  // Every workload's traffic is affine in its rows (per-row arrays plus fixed ones such as a
  // norm's gamma and beta): one and two rows give both terms. Each has at least one row, so
  // fast_workload(op, s, 1) is one row.
  const Workload one = fast_workload(op, s, 1);
  const Workload two = fast_workload(op, s, 2 * one.elements);
  const int64_t row = one.elements, per_row = two.bytes - one.bytes;
  const int64_t fixed = one.bytes - per_row;
  const int64_t most = std::max<int64_t>(1, elements / row);
  int64_t rows = std::clamp<int64_t>((max_bytes - fixed) / per_row, 1, most);
  Workload w = fast_workload(op, s, rows * row);
  // The affine count is exact today; the loop keeps the bound honest if a workload's traffic
  // ever grows faster than its rows.
  while (rows > 1 && w.bytes > max_bytes) w = fast_workload(op, s, --rows * row);
  return w;
}

std::vector<std::pair<std::string, std::string>> fast_workloads_missing() {
  // Every memory-bound op of issue #6's list has a fast kernel and a workload (attention is
  // measured by attention_workloads.h); a newly listed op without one goes here with the reason.
  return {};
}

}  // namespace lmo::tools
