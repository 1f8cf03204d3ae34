#include "oracle/drift/kernels.h"

#include <stdexcept>
#include <utility>

namespace lmo::oracle::drift {

std::vector<KernelBackend> kernel_backends() {
  std::vector<KernelBackend> out;
  bool have_fast = false;
  for (std::unique_ptr<Backend>& b : available_backends()) {
    const std::string name = b->name();
    // available_backends() lists the fast targets best first: the first is the dispatched one.
    if (!have_fast && name.rfind("fast-", 0) == 0) {
      have_fast = true;
      out.push_back(
          {"fast", "fast/ kernel (Highway, f32 compute, the best target here)", std::move(b)});
    } else if (name == "gpu") {
      out.push_back({"gpu", "gpu/ CUDA kernel (double compute)", std::move(b)});
    }
  }
  return out;
}

std::vector<ref::Tensor> run_kernel(Backend& backend, const std::string& op_name,
                                    const nlohmann::json& params, ref::Format storage,
                                    const std::vector<KernelInput>& inputs) {
  const KernelCall k = make_kernel_call("drift audit", op_name, params, storage, inputs);
  const std::string who = backend.name() + " on " + op_name + " (drift audit)";
  if (const std::string why = backend.unsupported(k.c, *k.op, storage); !why.empty()) {
    throw std::runtime_error(who + ": unsupported: " + why);
  }
  std::vector<GuardedBuffer> bufs = armed_outputs(*k.op, storage);
  // Kernel backends read neither the exact nor the simulated values.
  const RunContext ctx{k.c,
                       *k.op,
                       storage,
                       k.in,
                       []() -> const Outputs<ref::mp>& {
                         throw std::logic_error("drift: a kernel backend asked for exact values");
                       },
                       [](ref::Format) -> const Outputs<double>& {
                         throw std::logic_error("drift: a kernel backend asked for naive values");
                       }};
  try {
    backend.run(ctx, bufs);
  } catch (const std::exception& e) {
    throw std::runtime_error(who + ": the backend threw: " + e.what());
  }
  check_written(bufs, *k.op, backend.name(), op_name + " (drift audit)");
  std::vector<ref::Tensor> out;
  for (const GuardedBuffer& b : bufs) out.push_back(b.tensor());
  return out;
}

}  // namespace lmo::oracle::drift
