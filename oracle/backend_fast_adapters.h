// The fast backend's adapters (oracle/backend_fast.cc keeps the map from op name to adapter): an
// adapter runs one op of the oracle (its parameters and inputs) through the plain-pointer API of
// fast/ into the op's output buffers. Families with their own file declare their adapters here.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "fast/storage.h"
#include "oracle/guarded_buffer.h"
#include "oracle/op.h"

namespace lmo::oracle::fast_adapters {

using Adapter =
    std::function<void(const Op&, fast::Storage, const InputSet&, std::vector<GuardedBuffer>&)>;

// The bytes of an input tensor.
inline const void* ptr(const InputSet& in, std::string_view name) {
  return in.at(name).bytes().data();
}

// The op as its concrete class (the map sends each op name to the adapter of its class).
template <class T>
const T& as(const Op& op) {
  const T* p = dynamic_cast<const T*>(&op);
  if (!p) throw std::logic_error("fast backend: the op is not a " + std::string(typeid(T).name()));
  return *p;
}

// f32 results of the fast API stored into an output of the storage format, rounded to
// nearest-even: what a kernel writing that format would store.
void store_floats(const std::vector<float>& v, GuardedBuffer& b);

// MoE (backend_fast_moe.cc): moe_router, load_balance_loss and aux_free_update.
void run_moe_router(const Op& op, fast::Storage s, const InputSet& in,
                    std::vector<GuardedBuffer>& out);
void run_load_balance_loss(const Op& op, fast::Storage s, const InputSet& in,
                           std::vector<GuardedBuffer>& out);
void run_aux_free_update(const Op& op, fast::Storage s, const InputSet& in,
                         std::vector<GuardedBuffer>& out);

}  // namespace lmo::oracle::fast_adapters
