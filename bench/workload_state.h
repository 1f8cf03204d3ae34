// What one benchmark workload's call needs, alive as long as the workload (RunContext holds
// references): the case, the op, its inputs and armed output buffers, and the context a kernel
// backend reads. The memory- and compute-bound workloads (bench/memory_workloads.cc,
// bench/attention_workloads.cc) both time `backend.run(ctx, outputs)` on one of these.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "oracle/backends/backend.h"
#include "oracle/backends/kernel_call.h"
#include "oracle/cases/case.h"
#include "oracle/core/op.h"

namespace lmo::bench {

struct WorkloadState {
  WorkloadState(oracle::Case case_, std::unique_ptr<oracle::Op> op_, oracle::InputSet in_,
                ref::Format f)
      : c(std::move(case_)),
        op(std::move(op_)),
        in(std::move(in_)),
        outputs(oracle::armed_outputs(*op, f)),
        ctx{c, *op, f, in, no_reference, no_simulation} {}
  // A kernel backend reads only the inputs; a bench computes no reference.
  static const oracle::Outputs<ref::mp>& no_reference() {
    throw std::logic_error("bench: a backend asked for the exact reference");
  }
  static const oracle::Outputs<double>& no_simulation(ref::Format) {
    throw std::logic_error("bench: a backend asked for the naive run");
  }
  oracle::Case c;
  std::unique_ptr<oracle::Op> op;
  oracle::InputSet in;
  std::vector<oracle::GuardedBuffer> outputs;
  oracle::RunContext ctx;
};

// What a workload times and checks: one call of the backend on st, the check of its output
// buffers after the runs, and st kept alive as long as both are.
struct BackendCall {
  std::function<void()> run;
  std::function<void()> check_written;
  std::shared_ptr<void> state;
};
inline BackendCall backend_call(std::shared_ptr<WorkloadState> st, oracle::Backend& backend) {
  WorkloadState* s = st.get();
  return {[s, &backend] { backend.run(s->ctx, s->outputs); },
          [s, &backend] { oracle::check_written(s->outputs, *s->op, backend.name(), s->c.op); },
          std::move(st)};
}

}  // namespace lmo::bench
