// Functions of the certified path whose double-double arithmetic is mostly std::fma (2Prod):
// compiled twice by GCC, for x86-64 with FMA (one instruction each) and for the baseline (a libm
// call each), the loader choosing by the CPU's features. The clone is named by the feature, not
// by "arch=haswell": GCC's resolver takes an arch= clone only on that very CPU model
// (__builtin_cpu_is), so every later Intel CPU ran the baseline clone. The results are the same
// bits either way: an FMA is one correctly rounded operation on both, and the files using this are
// compiled with -ffp-contract=off, so no other a·b + c becomes one.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define LMO_FMA_CLONES [[gnu::target_clones("fma", "default")]]
#else
#define LMO_FMA_CLONES
#endif
