// Thread-count determinism of every fast kernel (issue #6: results bitwise identical for 1, 2 and
// N threads), written over the oracle's registry so that a kernel is covered as soon as its
// adapter joins the fast backend: every built-in case (cases/*.json), in every storage format
// that a fast-<target> backend runs (its unsupported() is ""), on every such backend, runs with
// fast::set_threads(1), 2 and 7 and must write the very same output bytes each time.
// The cases run at their own sizes, uncapped: with today's kernels the test takes about 17 s of
// CPU on this project's 2-core machine, most of it drawing the inputs (the largest is a
// 256000-wide cross-entropy row), the kernel runs under 2 s. It asserts that it covered the ops
// known to have fast kernels and a minimum number of (case, format) pairs, so that it cannot
// pass by running nothing.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fast/threads.h"
#include "oracle/backends/backend.h"
#include "oracle/cases/case.h"
#include "oracle/cases/case_inputs.h"
#include "oracle/ops/registry.h"
#include "reference/formats.h"

namespace lmo::oracle {
namespace {

// The (case, format) pairs the fast backends run over the built-in cases (246 over 33 ops on
// 2026-11-28), rounded down: far more than a test that silently ran nothing, or one case file,
// could reach.
constexpr int64_t kMinPairs = 240;

// One run of a backend on a case: the bytes of every output buffer, in order.
std::vector<uint8_t> run_once(Backend& b, const RunContext& ctx) {
  std::vector<GuardedBuffer> bufs;
  for (const OutputDecl& d : ctx.op.outputs()) {
    bufs.emplace_back(d.topk ? ref::DType::i64 : ref::format_dtype(ctx.storage), d.shape);
    bufs.back().arm();
  }
  b.run(ctx, bufs);
  std::vector<uint8_t> bytes;
  for (const GuardedBuffer& g : bufs) {
    const auto* p = static_cast<const uint8_t*>(g.data());
    bytes.insert(bytes.end(), p, p + g.nbytes());
  }
  return bytes;
}

TEST(FastThreads, EveryCaseBitwiseIdenticalFor1And2And7Threads) {
  std::vector<std::unique_ptr<Backend>> all = available_backends();
  std::vector<Backend*> fast;
  for (const auto& b : all) {
    if (b->name().rfind("fast-", 0) == 0) fast.push_back(b.get());
  }
  ASSERT_FALSE(fast.empty()) << "no fast-<target> backend in this build";

  const int old_threads = fast::threads();
  int64_t pairs = 0, runs = 0;
  std::set<std::string> ops;
  for (const Case& c : load_case_dir(builtin_cases_dir())) {
    const std::unique_ptr<Op> op = make_op(c);
    for (ref::Format f : ref::kAllFormats) {
      std::vector<Backend*> runnable;
      for (Backend* b : fast) {
        if (b->unsupported(c, *op, f).empty()) runnable.push_back(b);
      }
      if (runnable.empty()) continue;
      ++pairs;
      ops.insert(c.op);
      const InputSet in = make_inputs(c, *op, f);
      // The fast backends read only the inputs; the reference values are there on demand, as
      // in verify, should an adapter ever ask for them.
      std::optional<Outputs<ref::mp>> exact;
      std::map<ref::Format, Outputs<double>> sims;
      const RunContext ctx{c,
                           *op,
                           f,
                           in,
                           [&]() -> const Outputs<ref::mp>& {
                             if (!exact) exact = op->exact(in);
                             return *exact;
                           },
                           [&](ref::Format g) -> const Outputs<double>& {
                             auto it = sims.find(g);
                             if (it == sims.end()) it = sims.emplace(g, op->simulated(g, in)).first;
                             return it->second;
                           }};
      for (Backend* b : runnable) {
        const std::string where = c.id + " " + std::string(ref::format_name(f)) + " " + b->name();
        fast::set_threads(1);
        const std::vector<uint8_t> one = run_once(*b, ctx);
        for (int n : {2, 7}) {
          fast::set_threads(n);
          EXPECT_TRUE(run_once(*b, ctx) == one)
              << where << ": output differs with " << n << " threads from the 1-thread run";
        }
        runs += 3;
      }
    }
  }
  fast::set_threads(old_threads);

  // Every op whose record names a kernel entry has a fast kernel for it and a built-in case:
  // each must have run (the names from the registry, so an op added there is held to this
  // without a list to update).
  for (const OpInfo& o : op_registry()) {
    if (o.kernel == KernelEntry::kNone) continue;
    EXPECT_TRUE(ops.count(o.name)) << "no built-in case of " << o.name << " ran on a fast backend";
  }
  EXPECT_GE(pairs, kMinPairs) << "only " << pairs << " (case, format) pairs ran on fast backends";
  RecordProperty("case_format_pairs", static_cast<int>(pairs));
  RecordProperty("backend_runs", static_cast<int>(runs));
  std::printf("covered %lld (case, format) pairs of %zu ops, %lld backend runs\n",
              static_cast<long long>(pairs), ops.size(), static_cast<long long>(runs));
}

}  // namespace
}  // namespace lmo::oracle
