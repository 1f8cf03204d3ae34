// The kernel contract (kernels/api/) under fast's names: fast::Storage, fast::AttentionArgs,
// fast::detail::check_count and the rest are the contract's own types and checks, shared with
// gpu/, not copies of them. Every fast/ header that takes a contract type includes this one.
#pragma once

#include "kernels/api/activation.h"          // IWYU pragma: export
#include "kernels/api/attention_args.h"      // IWYU pragma: export
#include "kernels/api/decoder_block_args.h"  // IWYU pragma: export
#include "kernels/api/fp8_args.h"            // IWYU pragma: export
#include "kernels/api/mla_rope_angles.h"     // IWYU pragma: export
#include "kernels/api/rope_frequencies.h"    // IWYU pragma: export
#include "kernels/api/rope_layout.h"         // IWYU pragma: export
#include "kernels/api/rope_shape.h"          // IWYU pragma: export
#include "kernels/api/router_config.h"       // IWYU pragma: export
#include "kernels/api/storage.h"             // IWYU pragma: export
#include "kernels/api/t5_bias_shape.h"       // IWYU pragma: export
#include "kernels/api/t5_buckets.h"          // IWYU pragma: export
#include "kernels/api/turns.h"               // IWYU pragma: export
#include "kernels/api/validate.h"            // IWYU pragma: export
#include "kernels/api/validate_attention.h"  // IWYU pragma: export
#include "kernels/api/validate_ffn.h"        // IWYU pragma: export
#include "kernels/api/validate_moe.h"        // IWYU pragma: export
#include "kernels/api/validate_positional.h" // IWYU pragma: export

namespace lmo::fast {
using namespace lmo::kernels;  // NOLINT(google-build-using-namespace): one contract, two names
}  // namespace lmo::fast
namespace lmo::fast::detail {
using namespace lmo::kernels::detail;  // NOLINT(google-build-using-namespace)
}  // namespace lmo::fast::detail
