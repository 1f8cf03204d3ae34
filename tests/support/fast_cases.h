// Helpers for the fast-path tests: deterministic inputs in a storage format, their exact values
// in mp and in the simulated f32 compute format (the naive kernel's number type), guarded
// output buffers, and judging a backend output with the op's policy from
// oracle/ops/policy_table.h.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include "fast/storage.h"
#include "fast/target_scope.h"
#include "fast/targets.h"
#include "fast/threads.h"
#include "oracle/core/guarded_buffer.h"
#include "oracle/core/inputs.h"
#include "oracle/judge/judge.h"
#include "oracle/ops/policy_table.h"
#include "oracle/core/specials.h"
#include "reference/numeric.h"
#include "reference/tensor.h"

namespace lmo::testdata {

inline ref::DType dtype_of(fast::Storage s) {
  return s == fast::Storage::f32    ? ref::DType::f32
         : s == fast::Storage::bf16 ? ref::DType::bf16
                                    : ref::DType::f16;
}
inline ref::Format format_of(fast::Storage s) { return ref::dtype_format(dtype_of(s)); }

// Normal(mean, stddev) input of the given shape, in storage s.
inline ref::Tensor fast_normal(uint64_t seed, const std::string& name, fast::Storage s,
                               std::vector<int64_t> shape, double mean = 0, double stddev = 1) {
  return oracle::normal(seed, name, dtype_of(s), std::move(shape), mean, stddev);
}

// The values of a tensor as T (exact: every storage value is a T for T = mp or the simulated
// format of the storage).
template <class T>
std::vector<T> values_as(const ref::Tensor& t) {
  std::vector<T> v(static_cast<size_t>(t.numel()));
  const ref::Format f = ref::dtype_format(t.dtype());
  for (int64_t i = 0; i < t.numel(); ++i) {
    v[static_cast<size_t>(i)] = ref::from_mp<T>(ref::decode<ref::mp>(f, t.bits(i)));
  }
  return v;
}

// Runs fn(T-tag) with T = the naive kernel's number type: the backend's compute format, f32 for
// every storage (oracle/rules/policy.h: the naive-relative yardstick is the reference run in the
// compute format, its values not rounded to the storage format).
template <class Fn>
void with_sim(fast::Storage, const Fn& fn) {
  fn(ref::Sim<ref::Format::f32>{});
}

template <class T>
std::vector<double> as_doubles(const std::vector<T>& v) {
  std::vector<double> out;
  out.reserve(v.size());
  for (const T& x : v) out.push_back(ref::to_double(x));
  return out;
}

// Judges `got` against the exact values with the op's policy; naive values are needed for
// naive_relative policies, condition numbers for policies with an arg_error (the GELUs).
// Reports the verdict's first failure.
inline void expect_judged(const std::string& op, const std::string& output,
                          const std::vector<ref::mp>& exact, const oracle::GuardedBuffer& got,
                          const std::vector<double>& naive, const std::string& where,
                          const std::vector<double>& condition = {}) {
  oracle::JudgeOptions o;
  o.naive = naive;
  o.condition = condition;
  const oracle::Verdict v = oracle::judge(oracle::policy_for(op, output), exact, got, o);
  EXPECT_TRUE(v.pass) << where << " " << op << (output.empty() ? "" : "/" + output) << ": "
                      << v.detail << " (" << v.failed << " of " << v.elements << " failed)";
}

// Calls fn(target name) under a ScopedTarget for every compiled target this CPU supports.
inline void for_each_target(const std::function<void(const std::string&)>& fn) {
  for (const fast::SimdTarget& t : fast::compiled_targets()) {
    if (!t.supported) continue;
    fast::ScopedTarget scope(t);
    fn(t.name);
  }
}

// The bytes a kernel writes for 1 thread and for each of `counts` threads must be identical.
inline void expect_thread_invariant(const std::function<std::vector<uint8_t>()>& run,
                                    const std::string& where,
                                    const std::vector<int>& counts = {2, 7}) {
  const int old = fast::threads();
  fast::set_threads(1);
  const std::vector<uint8_t> one = run();
  for (int n : counts) {
    fast::set_threads(n);
    EXPECT_TRUE(run() == one) << where << ": output differs with " << n << " threads";
  }
  fast::set_threads(old);
}

inline std::vector<uint8_t> bytes_of(const oracle::GuardedBuffer& b) {
  const auto* p = static_cast<const uint8_t*>(b.data());
  return std::vector<uint8_t>(p, p + b.nbytes());
}

// The bytes of several buffers, one after the other (a kernel's outputs, for
// expect_thread_invariant).
inline std::vector<uint8_t> bytes_of(std::initializer_list<const oracle::GuardedBuffer*> bufs) {
  std::vector<uint8_t> out;
  for (const oracle::GuardedBuffer* b : bufs) {
    const std::vector<uint8_t> one = bytes_of(*b);
    out.insert(out.end(), one.begin(), one.end());
  }
  return out;
}

// max |got − exact| over the elements.
inline double max_error(const std::vector<ref::mp>& exact, const std::vector<double>& got) {
  double e = 0;
  for (size_t i = 0; i < exact.size(); ++i) {
    e = std::max(e, std::abs(got[i] - ref::to_double(exact[i])));
  }
  return e;
}

// The first n values of an output buffer, widened to double.
inline std::vector<double> values_of(const oracle::GuardedBuffer& y, int64_t n) {
  ref::Tensor t(y.dtype(), y.shape());
  std::memcpy(t.bytes().data(), y.data(), y.nbytes());
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = t.get(i);
  return v;
}

// `call` throws std::invalid_argument whose message names `arg` (a kernel's argument check).
inline void expect_rejects(const std::function<void()>& call, const std::string& arg) {
  try {
    call();
    ADD_FAILURE() << "no exception for a bad " << arg;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(arg), std::string::npos) << e.what();
  }
}

}  // namespace lmo::testdata
