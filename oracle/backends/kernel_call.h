// One backend call on an op built from its name and parameters, on input values the caller
// chose: what the claims on kernels (claims_kernel.h) and the drift audits' kernel policies
// (drift_kernels.h) share. verify runs generated cases; these run values of their own, with the
// same output checks: guarded, poisoned buffers, and a breached guard or an element left
// unwritten is an error naming the backend, the op and the output.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "oracle/backends/backend.h"
#include "oracle/cases/case.h"
#include "oracle/core/guarded_buffer.h"
#include "oracle/core/op.h"

namespace lmo::oracle {

// An input of the op, by its declared name: real values, each exactly representable in the
// call's storage format (or in the input's fixed dtype), or integers (targets, positions), as
// ints or as whole-number values.
struct KernelInput {
  std::string name;
  std::vector<double> values;
  std::vector<int64_t> ints;
};

struct KernelCall {
  Case c;
  std::unique_ptr<Op> op;
  InputSet in;
};

// The op with these parameters (InputError when they are not its), in one storage format, and
// its inputs: every declared input given with the declared element count, except derived ones
// (a RoPE table), which are computed from the others. `who` names the caller in messages
// ("claims", "drift audit"). std::logic_error for a missing, misshapen or inexact input.
KernelCall make_kernel_call(const std::string& who, const std::string& op_name,
                            const nlohmann::json& params, ref::Format storage,
                            const std::vector<KernelInput>& inputs);

// One armed buffer per output of the op: the storage format (or the output's own format,
// OutputDecl::format), i64 for top-k indices.
std::vector<GuardedBuffer> armed_outputs(const Op& op, ref::Format storage);

// After the backend's call: std::runtime_error naming `backend` and the op when a guard is
// breached or an element still holds the poison (for the dtypes whose poison no value equals).
void check_written(const std::vector<GuardedBuffer>& outputs, const Op& op,
                   const std::string& backend, const std::string& op_name);

}  // namespace lmo::oracle
