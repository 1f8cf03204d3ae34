// The argument checks that gpu/api.cc's functions share (kernels/api/validate.h's, grouped by the
// shapes of the kernels): a row kernel's storage and shape, an elementwise kernel's storage and
// count, and a list of pointers. Same messages and order as the fast entry points. Internal to
// gpu/.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include "kernels/api/validate.h"
#include "gpu/host_call.h"

namespace lmo::gpu::detail {

// A pointer argument and its name.
struct PtrArg {
  const char* name;
  const void* p;
};

// Each pointer non-null when the call touches an element (`needed`), checked in order.
inline void check_ptrs(const char* fn, bool needed, std::initializer_list<PtrArg> args) {
  for (const PtrArg& a : args) kernels::detail::check_ptr(fn, a.name, a.p, needed);
}

// A row kernel: a known storage, rows ≥ 0 rows of width ≥ 1 (named width_name).
inline void check_rows(const char* fn, Storage s, int64_t rows, const char* width_name,
                       int64_t width) {
  check_storage(fn, s);
  kernels::detail::check_count(fn, "rows", rows, 0);
  kernels::detail::check_count(fn, width_name, width, 1);
}

using kernels::detail::check_activation;

// An elementwise kernel: a known storage, n ≥ 0 elements.
inline void check_elements(const char* fn, Storage s, int64_t n) {
  check_storage(fn, s);
  kernels::detail::check_count(fn, "n", n, 0);
}

}  // namespace lmo::gpu::detail
