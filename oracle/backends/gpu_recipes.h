// The recipes the gpu backend's kernels declare (Backend::declared_recipe; docs/gpu.md), per
// kernel entry of the ops' records, beside gpu.cc's adapter for each. CUDA-free, so that the
// host tests of the kernels' math (tests/kernels/gpu_*_math_test.cc), which run without CUDA,
// judge that math under the very recipe the backend declares.
#pragma once

#include <optional>
#include <string_view>

#include "oracle/core/kernel_entry.h"
#include "oracle/rules/recipe.h"

namespace lmo::oracle {

// The recipe text the GPU kernel of entry e follows, "" where it declares none (a kernel that
// evaluates in double and rounds once to f32: more accurate than the strict f32 run, judged
// under the case's recipe as before).
std::string_view gpu_recipe_text(KernelEntry e);
// gpu_recipe_text parsed; nullopt where it is "".
std::optional<Recipe> gpu_declared_recipe(KernelEntry e);

}  // namespace lmo::oracle
