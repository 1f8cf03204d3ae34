// The kernel policies of the drift audits ("fast …", "gpu …"): the kernels run through the
// Backend interface, as verify runs them, so every kernel library of the build is audited the
// same way (the GPU's when a device is present) and each call gets verify's output checks: the
// output buffers are guarded and poisoned, and a breached guard or an element left unwritten is
// an error, not a drift figure. Internal to oracle/drift*.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "oracle/backends/backend.h"
#include "oracle/backends/kernel_call.h"
#include "reference/formats.h"
#include "reference/tensor.h"

namespace lmo::oracle::drift {

// A kernel backend the audits run, with the prefix of its policies' names.
struct KernelBackend {
  std::string label;  // "fast" (the CPU's best Highway target, what fast/'s dispatch picks), "gpu"
  std::string description;  // for the policies' descriptions, the same on every machine
  std::unique_ptr<Backend> backend;
};

// The fast backend of the best supported target, then gpu when this build has CUDA and a device
// is present: the policies' order in every audit.
std::vector<KernelBackend> kernel_backends();

// Runs `op` with `params` in `storage` on the given inputs (kernel_call.h) through the backend
// and returns its outputs as stored (storage-format patterns; i64 for top-k indices). Throws
// std::runtime_error naming the backend and the op when the call throws, a guard is breached or
// an element is left unwritten; InputError when the parameters are not the op's.
std::vector<ref::Tensor> run_kernel(Backend& backend, const std::string& op,
                                    const nlohmann::json& params, ref::Format storage,
                                    const std::vector<KernelInput>& inputs);

}  // namespace lmo::oracle::drift
