// The reference backends (backend.h): ref and ref-<format>.
#include "oracle/backends/backend.h"
#include "oracle/backends/registry.h"
#include "oracle/core/row_slice.h"

namespace lmo::oracle {
namespace {

class ExactBackend : public Backend {
 public:
  std::string name() const override { return "ref"; }
  std::string description() const override {
    return "exact reference (mp, 50 digits), rounded once: the golden values";
  }
  // At real shapes verify judges an op with independent rows a block at a time, so that the
  // whole op's exact values never exist at once (verify.h, run_and_judge); this backend would
  // need them all (cross-entropy at 4096 × 128256: 29 GB of mp). `golden` writes those values
  // in blocks.
  std::string unsupported(const Case&, const Op& op, ref::Format) const override {
    if (rows_per_block(op, op.outputs()) > 0) {
      return "judged in blocks of rows at this size: the exact reference's whole outputs are "
             "not held (lmoracle golden writes them)";
    }
    return "";
  }
  void run(const RunContext& ctx, std::vector<GuardedBuffer>& outputs) override {
    store_outputs(ctx.exact(), outputs);
  }
};

class SimulatedBackend : public Backend {
 public:
  explicit SimulatedBackend(ref::Format compute) : compute_(compute) {}
  std::string name() const override {
    return "ref-" + std::string(ref::dtype_name(ref::format_dtype(compute_)));
  }
  std::string description() const override {
    const std::string f(ref::dtype_name(ref::format_dtype(compute_)));
    if (compute_ == ref::Format::f64) return "the reference formula computed in double (libm)";
    if (compute_ == ref::Format::f32) {
      return "the reference formula computed in f32, each operation rounded once: a careful "
             "f32 kernel";
    }
    return "naive kernel computing in " + f + " (runs on " + f +
           " storage only; not in the default run: it fails elementwise policies by design)";
  }
  bool in_default_run() const override { return !narrow(); }
  ref::Format compute_format() const override { return compute_; }
  std::string unsupported(const Case&, const Op&, ref::Format storage) const override {
    if (narrow() && storage != compute_) {
      return "a naive " + std::string(ref::dtype_name(ref::format_dtype(compute_))) +
             " kernel runs on its own storage format only";
    }
    return "";
  }
  void run(const RunContext& ctx, std::vector<GuardedBuffer>& outputs) override {
    store_outputs(ctx.simulated(compute_), outputs);
  }

 private:
  bool narrow() const { return compute_ != ref::Format::f64 && compute_ != ref::Format::f32; }
  ref::Format compute_;
};

}  // namespace

void add_reference_backends(std::vector<std::unique_ptr<Backend>>& out) {
  out.push_back(std::make_unique<ExactBackend>());
  for (ref::Format f : ref::kAllFormats) out.push_back(std::make_unique<SimulatedBackend>(f));
}

}  // namespace lmo::oracle
