#include "oracle/judge/verdict_text.h"

#include <mpfr.h>

#include <cinttypes>
#include <cstdio>
#include <optional>

namespace lmo::oracle {
namespace verdict_text {

using ref::Format;

std::string hex(uint64_t b) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIX64, b);
  return buf;
}

std::string num(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

// 17 significant digits through MPFR itself (boost's str() trips a GCC 12 -Wrestrict false
// positive).
std::string num(const mp& x) {
  char buf[64];
  mpfr_snprintf(buf, sizeof buf, "%.17Rg", x.backend().data());
  return buf;
}

std::string exact(const mp& x) {
  char buf[64];
  mpfr_snprintf(buf, sizeof buf, "%.20Re", x.backend().data());
  return buf;
}

std::string value(Format f, uint64_t b) {
  return num(ref::decode<double>(f, b)) + " (" + hex(b) + ")";
}

void fail(Verdict& v, int64_t i, FailReason r, const std::string& detail) {
  ++v.failed;
  ++v.by_reason[static_cast<size_t>(r)];
  if (v.pass) {
    v.pass = false;
    v.reason = r;
    v.first_index = i;
    v.detail = "element " + std::to_string(i) + ": " + detail;
  }
}

bool poison_means_unwritten(ref::DType d, uint64_t reference) {
  if (poison_is_distinctive(d)) return true;
  if (ref::is_float(d)) return !ref::bits_is_nan(ref::dtype_format(d), reference);
  return reference != poison_bits(d);
}

void check_guard(Verdict& v, const GuardedBuffer& buf) {
  const std::optional<int64_t> breach = buf.guard_breach();
  if (!breach) return;
  const auto sz = static_cast<int64_t>(ref::dtype_size(buf.dtype()));
  const int64_t off = *breach;
  const int64_t index = off >= 0 ? off / sz : -((-off + sz - 1) / sz);
  v.pass = false;
  v.reason = FailReason::kOverrun;
  v.first_index = index;
  ++v.by_reason[static_cast<size_t>(FailReason::kOverrun)];
  v.detail = "guard byte at offset " + std::to_string(off) + " of a " +
             std::to_string(buf.nbytes()) + "-byte output changed: the backend wrote element " +
             std::to_string(index) + " of " + std::to_string(buf.numel()) +
             (off >= 0 ? " (past the end)" : " (before the start)");
}

std::string pattern_failure(Format f, uint64_t y) {
  const ref::FormatSpec& s = ref::spec(f);
  if ((y & ~(s.pattern_mask() << s.shift)) == 0) return "";
  return "the word " + hex(y) + " has bits set below the " + std::string(s.name) + " pattern";
}

}  // namespace verdict_text

std::string_view fail_reason_name(FailReason r) {
  switch (r) {
    case FailReason::kNone:
      return "none";
    case FailReason::kUnwritten:
      return "unwritten";
    case FailReason::kNanParity:
      return "nan_parity";
    case FailReason::kInfParity:
      return "inf_parity";
    case FailReason::kPolicy:
      return "policy";
    case FailReason::kOverrun:
      return "overrun";
  }
  return "?";
}

}  // namespace lmo::oracle
