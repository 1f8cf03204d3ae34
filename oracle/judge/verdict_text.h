// How the judge records a failure in a Verdict and words it: the first failure's index, reason
// and sentence, a guard breach of a backend's buffer, the poison left in an unwritten element,
// and values written as "decimal (0xBITS)". Shared by the elementwise judge (judge.cc), the
// naive-relative bounds (naive_bounds.cc) and the top-k judge (judge_topk.cc).
#pragma once

#include <cstdint>
#include <string>

#include "oracle/core/guarded_buffer.h"
#include "oracle/judge/judge.h"
#include "reference/formats.h"
#include "reference/number_types.h"

namespace lmo::oracle::verdict_text {

std::string hex(uint64_t b);
// 9 significant digits.
std::string num(double x);
// 17 significant digits.
std::string num(const mp& x);
// 21 significant digits, in scientific notation ("1.00000000000000000001e+02"): a double's 17
// and a few more, to show where an exact value lies between two f32 or f64 neighbours (a worst
// element's exact reference, when no recipe explains its error).
std::string exact(const mp& x);
// "decimal (0xBITS)" of bits b in format f.
std::string value(ref::Format f, uint64_t b);

// Counts element i's failure for reason r; the first one also sets the verdict's reason, index
// and detail ("element i: detail").
void fail(Verdict& v, int64_t i, FailReason r, const std::string& detail);
// Whether an element still holding the poison counts as unwritten (guarded_buffer.h).
bool poison_means_unwritten(ref::DType d, uint64_t reference);
// A changed guard byte of buf fails v with kOverrun, naming the element it belongs to.
void check_guard(Verdict& v, const GuardedBuffer& buf);
// A word with bits set below the format's pattern (tf32) is not a value of it; "" otherwise.
std::string pattern_failure(ref::Format f, uint64_t y);

}  // namespace lmo::oracle::verdict_text
