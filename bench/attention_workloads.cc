#include "bench/attention_workloads.h"

#include <stdexcept>
#include <utility>

#include "bench/workload_state.h"
#include "oracle/cases/case_inputs.h"
#include "oracle/ops/registry.h"

namespace lmo::bench {
namespace {

struct Found {
  const oracle::OpInfo* op;
  const oracle::ComputeShape* shape;
};

Found find_shape(const std::string& name) {
  for (const oracle::OpInfo& o : oracle::op_registry()) {
    for (const oracle::ComputeShape& c : o.compute) {
      if (c.name == name) return {&o, &c};
    }
  }
  std::string names;
  for (const std::string& n : compute_workload_names()) names += (names.empty() ? "" : ", ") + n;
  throw std::invalid_argument("bench: no compute workload named '" + name + "'; known: " + names);
}

}  // namespace

std::vector<std::string> compute_workload_names() {
  std::vector<std::string> names;
  for (const oracle::OpInfo& o : oracle::op_registry()) {
    for (const oracle::ComputeShape& c : o.compute) names.push_back(c.name);
  }
  return names;
}

ComputeWorkload compute_workload(const std::string& name, oracle::Backend& backend, ref::Format f,
                                 int64_t tokens) {
  if (tokens < 1) throw std::invalid_argument("compute_workload: tokens must be >= 1");
  const Found w = find_shape(name);
  const nlohmann::json cj = {{"id", "bench/" + w.shape->name},
                             {"op", w.op->name},
                             {"seed", 1},
                             {"formats", {std::string(ref::format_name(f))}},
                             {"params", w.shape->params(tokens)}};
  oracle::Case c = oracle::parse_case(cj, "bench", w.shape->name);
  std::unique_ptr<oracle::Op> op = oracle::make_op(c);
  // Refused before anything is drawn or allocated.
  if (std::string why = backend.unsupported(c, *op, f); !why.empty()) {
    throw std::invalid_argument("bench: " + backend.name() + " does not run " + w.shape->name +
                                " in " + std::string(ref::format_name(f)) + ": " + why);
  }
  const oracle::ComputeCount n = w.shape->count(tokens);
  ComputeWorkload out;
  out.name = w.shape->name;
  out.op = w.op->name;
  out.shape = n.shape;
  out.size = n.size;
  out.flops = n.flops;
  out.gemm_m = n.gemm_m, out.gemm_n = n.gemm_n, out.gemm_k = n.gemm_k;
  oracle::InputSet in = oracle::make_inputs(c, *op, f);
  auto st = std::make_shared<WorkloadState>(std::move(c), std::move(op), std::move(in), f);
  BackendCall call = backend_call(std::move(st), backend);
  out.run = std::move(call.run);
  out.check_written = std::move(call.check_written);
  out.state = std::move(call.state);
  return out;
}

}  // namespace lmo::bench
