#include "oracle/backends/system_info.h"

#include <sstream>

#include "reference/catalog.h"
#include "reference/formats.h"
#ifdef LMO_HAVE_CUDA
#include "gpu/api.h"
#endif

namespace lmo::oracle {

SystemInfo system_info() {
  SystemInfo info;
  info.version = version();
  info.simd_targets = fast::compiled_targets();
  info.simd_dispatched = fast::dispatched_target();
#ifdef LMO_HAVE_CUDA
  info.cuda_compiled = true;
  gpu::DeviceInfo dev = gpu::query_device();
  info.cuda_device = dev.present;
  info.cuda_device_name = dev.present ? dev.name + " (sm_" + std::to_string(dev.compute_major) +
                                            std::to_string(dev.compute_minor) + ")"
                                      : dev.reason;
#else
  info.cuda_device_name = "CUDA not compiled";
#endif
  return info;
}

namespace {
nlohmann::json format_json(const ref::FormatSpec& s) {
  return {{"name", s.name},
          {"exponent_bits", s.exp_bits},
          {"fraction_bits", s.frac_bits},
          {"bias", s.bias},
          {"has_inf", s.has_inf},
          {"max_finite", ref::decode<double>(s.id, ref::max_finite_bits(s.id))},
          {"storage_bits", s.container_bits}};
}
}  // namespace

nlohmann::json to_json(const SystemInfo& info) {
  nlohmann::json j;
  j["version"] = info.version;
  j["number_types"] = {"mp", "float128", "double", "float"};
  j["formats"] = nlohmann::json::array();
  for (const ref::FormatSpec& s : ref::kFormatSpecs) j["formats"].push_back(format_json(s));
  j["ops"] = nlohmann::json::array();
  for (const ref::CatalogRow& r : ref::formula_catalog()) {
    j["ops"].push_back({{"id", r.id},
                        {"name", r.name},
                        {"functions", r.functions}});
  }
  j["simd_targets"] = nlohmann::json::array();
  for (const fast::SimdTarget& t : info.simd_targets) {
    j["simd_targets"].push_back({{"name", t.name}, {"supported", t.supported}});
  }
  j["simd_dispatched"] = info.simd_dispatched;
  j["cuda"] = {{"compiled", info.cuda_compiled}, {"device", info.cuda_device}};
  j["cuda"][info.cuda_device ? "device_name" : "reason"] = info.cuda_device_name;
  return j;
}

std::string to_text(const SystemInfo& info) {
  std::ostringstream o;
  o << "lmoracle " << info.version << "\n\nNumber types: mp (MPFR, 50 digits), float128, double, "
    << "float\nFormats (round to nearest-even, subnormals kept):\n";
  for (const ref::FormatSpec& s : ref::kFormatSpecs) {
    o << "  " << s.name << "  e" << s.exp_bits << "m" << s.frac_bits << "  max "
      << ref::decode<double>(s.id, ref::max_finite_bits(s.id))
      << (s.has_inf ? "  ±inf" : "  no inf (finite-only)") << "\n";
  }
  o << "\nOps (catalog F-rows; reference/<header>: functions):\n";
  for (const ref::CatalogRow& r : ref::formula_catalog()) {
    o << "  " << r.id << "  " << r.name << "\n        " << r.functions << "\n";
  }
  o << "\nSIMD targets compiled (best first):\n";
  for (const fast::SimdTarget& t : info.simd_targets) {
    o << "  " << t.name << (t.supported ? "  supported by this CPU" : "  not supported here")
      << "\n";
  }
  o << "  dispatch picks: " << info.simd_dispatched << "\n\nCUDA: "
    << (info.cuda_compiled ? "compiled" : "not compiled");
  if (info.cuda_compiled) {
    o << "; device: " << (info.cuda_device ? info.cuda_device_name : "none (" + info.cuda_device_name + ")");
  }
  o << "\n";
  return o.str();
}

}  // namespace lmo::oracle
