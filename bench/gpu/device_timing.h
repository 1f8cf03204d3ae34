// The GPU side of `lmoracle bench --backend gpu`: the registry's workloads (bench/
// memory_workloads.h, bench/attention_workloads.h) run through the gpu backend as verify runs
// it, and each gpu/api.h call they make has its kernels timed on the call's own device buffers
// (gpu/launch_observer.h), without the host copies around them, against a yardstick in the same
// run: a device-to-device copy of the same traffic or a cuBLAS SGEMM. CUDA-free interface.
#pragma once

#include <cstdint>
#include <functional>

namespace lmo::bench::gpu {

struct DeviceTiming {
  int calls = 0;                 // gpu/api.h calls the workload made, each timed
  double seconds = 0;            // the sum over those calls of their kernels' median time
  double yardstick_seconds = 0;  // the yardstick's median (the mean over calls of their medians)
  int repetitions = 0;
};

// Runs `run` (one call of a workload through the gpu backend) once, observing its gpu/api.h
// calls; for each, one untimed replay of its kernels and one of the yardstick, then `repetitions`
// timed replays of each, alternating (bench/gpu/timing.cuh), medians. The copy moves `bytes`
// (bytes/2 read, bytes/2 written), so that it carries the workload's traffic. Throws
// std::invalid_argument for a count < 1, std::runtime_error when `run` made no gpu/api.h call
// (a backend other than the gpu's) or for a CUDA failure.
DeviceTiming time_against_copy(const std::function<void()>& run, int64_t bytes, int repetitions);

// The same against cublasSgemm C[m×n] = A[m×k]·B[k×n] in f32 (the default math mode: no TF32).
DeviceTiming time_against_sgemm(const std::function<void()>& run, int64_t m, int64_t n, int64_t k,
                                int repetitions);

}  // namespace lmo::bench::gpu
