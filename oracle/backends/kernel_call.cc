#include "oracle/backends/kernel_call.h"

#include <stdexcept>
#include <utility>

namespace lmo::oracle {

KernelCall make_kernel_call(const std::string& who, const std::string& op_name,
                            const nlohmann::json& params, ref::Format storage,
                            const std::vector<KernelInput>& inputs) {
  KernelCall k;
  k.c.file = who;
  k.c.path = op_name;
  k.c.id = who + "/" + op_name;
  k.c.op = op_name;
  k.c.formats = {storage};
  k.c.params = params;
  k.c.inputs = nlohmann::json::object();
  k.op = make_op(k.c);
  for (const InputDecl& d : k.op->inputs()) {
    ref::Tensor t(d.dtype.value_or(ref::format_dtype(storage)), d.shape);
    if (d.computed) {
      d.computed(k.in, t);
      k.in.add(d.name, std::move(t));
      continue;
    }
    const KernelInput* given = nullptr;
    for (const KernelInput& g : inputs) {
      if (g.name == d.name) given = &g;
    }
    // Integer inputs come as ints, or as values that are whole numbers (Tensor::set checks).
    const bool ints = given != nullptr && !ref::is_float(t.dtype()) && !given->ints.empty();
    const size_t n = given == nullptr ? 0 : ints ? given->ints.size() : given->values.size();
    if (given == nullptr || static_cast<int64_t>(n) != t.numel()) {
      throw std::logic_error(who + ": " + op_name + " needs input '" + d.name + "' with " +
                             std::to_string(t.numel()) + " values");
    }
    for (int64_t i = 0; i < t.numel(); ++i) {
      const auto e = static_cast<size_t>(i);
      const double v = ints ? static_cast<double>(given->ints[e]) : given->values[e];
      t.set(i, v);
      if (t.get(i) != v) {
        throw std::logic_error(who + ": input '" + d.name + "' of " + op_name +
                               " is not exact in its storage format");
      }
    }
    k.in.add(d.name, std::move(t));
  }
  return k;
}

std::vector<GuardedBuffer> armed_outputs(const Op& op, ref::Format storage) {
  std::vector<GuardedBuffer> bufs;
  for (const OutputDecl& d : op.outputs()) {
    bufs.emplace_back(d.topk ? ref::DType::i64 : ref::format_dtype(output_format(d, storage)),
                      d.shape);
    bufs.back().arm();
  }
  return bufs;
}

void check_written(const std::vector<GuardedBuffer>& outputs, const Op& op,
                   const std::string& backend, const std::string& op_name) {
  const std::vector<OutputDecl> decls = op.outputs();
  for (size_t k = 0; k < outputs.size(); ++k) {
    const GuardedBuffer& b = outputs[k];
    if (const std::optional<int64_t> at = b.guard_breach()) {
      throw std::runtime_error(backend + " wrote past output '" + decls[k].name + "' of " +
                               op_name + " (byte " + std::to_string(*at) + " from its start)");
    }
    if (!poison_is_distinctive(b.dtype())) continue;
    for (int64_t i = 0; i < b.numel(); ++i) {
      if (b.is_poison(i)) {
        throw std::runtime_error(backend + " left element " + std::to_string(i) + " of output '" +
                                 decls[k].name + "' of " + op_name + " unwritten");
      }
    }
  }
}

}  // namespace lmo::oracle
