#include "bench_command.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>

#include "bench/attention_workloads.h"
#include "bench/bandwidth.h"
#include "bench/cache_rate.h"
#include "bench/flop_rate.h"
#include "bench/memory_workloads.h"
#include "bench_gpu.h"
#include "bench_rows.h"
#include "fast/storage.h"
#include "fast/target_scope.h"
#include "fast/targets.h"
#include "fast/threads.h"
#include "oracle/backends/backend.h"
#include "oracle/core/case_error.h"

namespace {

using lmo::oracle::InputError;

// Issue #6's goal for a memory-bound kernel: 0.8 of memcpy's bandwidth on one thread.
constexpr double kGoalRatio = 0.8;
// The in-cache size's traffic per call: a quarter of this machine's 1 MiB L2 per core (and half
// of a 512 KiB one), so that the kernel's inputs and outputs stay there between calls.
constexpr int64_t kCacheBytes = int64_t{256} << 10;
// An in-cache batch moves at least the large size's traffic and at least this much, so that it
// takes milliseconds, not microseconds, whatever the size.
constexpr int64_t kMinBatchBytes = int64_t{16} << 20;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// "fast" is the target dynamic dispatch picks; "fast-<target>" forces one supported target.
std::optional<lmo::fast::SimdTarget> parse_backend(const std::string& name) {
  std::string names = "fast";
  for (const lmo::fast::SimdTarget& t : lmo::fast::compiled_targets()) {
    if (!t.supported) continue;
    if (name == "fast-" + lower(t.name)) return t;
    names += ", fast-" + lower(t.name);
  }
  if (name == "fast") return std::nullopt;
  throw InputError("command line", "--backend",
                   "expected one of " + names +
                       ", got \"" + name + "\"");
}

// The kernels' storage formats (fast/storage.h: the gpu backend stores the same three).
std::vector<lmo::ref::Format> parse_formats(const std::vector<std::string>& names) {
  if (names.empty()) return {lmo::ref::Format::f32, lmo::ref::Format::bf16};
  std::vector<lmo::ref::Format> out;
  for (const std::string& n : names) {
    const auto s = lmo::fast::parse_storage(n);
    if (!s) {
      throw InputError("command line", "--format",
                       "expected a fast/ storage format (f32, bf16, f16), got \"" + n + "\"");
    }
    out.push_back(*lmo::ref::parse_format(lmo::fast::storage_name(*s)));
  }
  return out;
}

std::string gbs(double bytes_per_s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", bytes_per_s / 1e9);
  return b;
}

void print_header() {
  std::printf("%-14s %-12s %-6s %-14s %9s %12s %7s %10s %7s %-7s\n", "op", "backend", "format",
              "shape", "GB/s", "memcpy GB/s", "ratio", "cache GB/s", "c.ratio", "bound");
}

// One row of the table (JSON rows of the fast and gpu backends alike; gpu rows have no in-cache
// measurement and show "-" there).
void print_row(const nlohmann::json& r) {
  const bool cache = r.contains("cache_bytes_per_s");
  char cache_ratio[16] = "-";
  if (cache) std::snprintf(cache_ratio, sizeof cache_ratio, "%.2f", r["cache_ratio"].get<double>());
  std::printf("%-14s %-12s %-6s %-14s %9s %12s %7.2f %10s %7s %-7s\n",
              r["op"].get<std::string>().c_str(), r["backend"].get<std::string>().c_str(),
              r["format"].get<std::string>().c_str(), r["shape"].get<std::string>().c_str(),
              gbs(r["bytes_per_s"].get<double>()).c_str(),
              gbs(r["memcpy_bytes_per_s"].get<double>()).c_str(), r["ratio"].get<double>(),
              cache ? gbs(r["cache_bytes_per_s"].get<double>()).c_str() : "-", cache_ratio,
              cache ? r["bound"].get<std::string>().c_str() : "-");
}

void print_compute_header() {
  std::printf("%-16s %-12s %-6s %-40s %9s %12s %7s\n", "op", "backend", "format", "shape",
              "GFLOP/s", "sgemm GFLOP/s", "ratio");
}

// One compute-bound row (fast and gpu alike).
void print_compute_row(const nlohmann::json& r) {
  std::printf("%-16s %-12s %-6s %-40s %9.2f %12.2f %7.2f\n", r["op"].get<std::string>().c_str(),
              r["backend"].get<std::string>().c_str(), r["format"].get<std::string>().c_str(),
              r["shape"].get<std::string>().c_str(), r["flops_per_s"].get<double>() / 1e9,
              r["sgemm_flops_per_s"].get<double>() / 1e9, r["ratio"].get<double>());
}

// What the compute rows count, whatever the backend.
constexpr const char* kFlopsNote =
    "GFLOP/s: the op record's useful operations (attention: 4d per visible (query, key) pair and "
    "query head; MLA decode: the absorption, then q·k over d_c + d_r and p·v over d_c per head "
    "and cached key); ";

}  // namespace

CLI::App* add_bench_command(CLI::App& app, BenchArgs& a) {
  CLI::App* b = app.add_subcommand(
      "bench", "Memory-bound kernels' bandwidth as a ratio to memcpy of the same traffic; attention's "
      "GFLOP/s as a ratio to OpenBLAS sgemm");
  b->add_option("--backend", a.backend,
                "fast (the dispatched SIMD target), fast-<target> (see `lmoracle list`) or gpu "
                "(the CUDA kernels; needs a device)");
  b->add_option("--format", a.formats, "Storage formats (repeatable; default f32 and bf16)");
  b->add_option("--filter", a.filter, "Regular expression searched in op names");
  b->add_option("--threads", a.threads, "Threads of the fast kernels (default 1; not for gpu)");
  b->add_option("--size", a.size, "Elements of each kernel's main input (default 2^25)");
  b->add_option("--repetitions", a.repetitions, "Timed calls of each (median; default 5)");
  b->add_flag("--quick", a.quick, "2^20 elements, 2 repetitions: a smoke run, not a measurement");
  b->add_flag("--json", a.json, "Print JSON rows instead of a table");
  return b;
}

int run_bench(const BenchArgs& a) {
  const bool gpu = a.backend == "gpu";
  const std::optional<lmo::fast::SimdTarget> forced =
      gpu ? std::nullopt : parse_backend(a.backend);
  const std::vector<lmo::ref::Format> formats = parse_formats(a.formats);
  if (a.threads < 1 || a.threads > 1024) {
    throw InputError("command line", "--threads", "expected 1 … 1024, got " + std::to_string(a.threads));
  }
  const int64_t size = a.quick ? int64_t{1} << 20 : a.size;
  const int reps = a.quick ? 2 : a.repetitions;
  // 2^30 elements of f32 are 4 GiB per array; beyond that a benchmark only measures swapping.
  if (size < 4096 || size > (int64_t{1} << 30)) {
    throw InputError("command line", "--size",
                     "expected 4096 … 2^30 elements, got " + std::to_string(size));
  }
  if (reps < 1 || reps > 1000) {
    throw InputError("command line", "--repetitions", "expected 1 … 1000, got " + std::to_string(reps));
  }
  std::regex filter;
  try {
    filter = std::regex(a.filter);
  } catch (const std::regex_error& e) {
    throw InputError("command line", "--filter",
                     "expected a regular expression, got \"" + a.filter + "\" (" + e.what() + ")");
  }
  // The compute-bound workloads' tokens (prefill; the decode steps' caches are 16 times longer).
  const int64_t tokens = a.quick ? 256 : 2048;
  if (gpu) {
    const lmo::tools::GpuBenchRows g =
        lmo::tools::gpu_bench_rows(formats, size, tokens, reps, filter);
    if (a.json) {
      nlohmann::json rows = g.memory;
      for (const nlohmann::json& r : g.compute) rows.push_back(r);
      std::cout << nlohmann::json{{"rows", rows}, {"not_measured", g.not_measured}}.dump(2) << "\n";
      return 0;
    }
    if (!g.memory.empty()) {
      print_header();
      for (const nlohmann::json& r : g.memory) print_row(r);
      std::printf(
          "bytes: each input read once and each output written once; ratio: over a "
          "device-to-device cudaMemcpy of the same bytes in this run (cudaEvent timing "
          "of the kernels on device buffers, without the host copies), median of %d\n",
          reps);
    }
    if (!g.compute.empty()) {
      print_compute_header();
      for (const nlohmann::json& r : g.compute) print_compute_row(r);
      std::printf(
          "%sratio: over cuBLAS SGEMM (f32) of the shape m x n x k in the JSON rows, in "
          "this run (cudaEvent timing of the kernels on device buffers), median of %d; "
          "the kernels compute in double\n",
          kFlopsNote, reps);
    }
    for (const nlohmann::json& r : g.not_measured) {
      std::printf("not measured: %s %s: %s\n", r["op"].get<std::string>().c_str(),
                  r["format"].get<std::string>().c_str(), r["reason"].get<std::string>().c_str());
    }
    return 0;
  }
  // The target, forced for the whole run (the dispatched one when none is asked for): the fast
  // backend's own per-call scope is then free (fast/target_scope.h).
  const std::string target_name = forced ? forced->name : lmo::fast::dispatched_target();
  std::optional<lmo::fast::SimdTarget> target = forced;
  for (const lmo::fast::SimdTarget& t : lmo::fast::compiled_targets()) {
    if (!target && t.supported && t.name == target_name) target = t;
  }
  if (!target) throw std::logic_error("bench: no compiled target named " + target_name);
  const lmo::fast::ScopedTarget scope(*target);
  const std::string backend = "fast-" + lower(target_name);
  lmo::fast::set_threads(a.threads);
  const bool tty = !a.json && isatty(STDERR_FILENO);

  // The memory- and compute-bound workloads run through the fast backend of that target (bench/),
  // as verify calls it.
  std::unique_ptr<lmo::oracle::Backend> runner;
  for (std::unique_ptr<lmo::oracle::Backend>& b : lmo::oracle::available_backends()) {
    if (b->name() == backend) runner = std::move(b);
  }
  if (!runner) throw std::logic_error("bench: no backend named " + backend);

  nlohmann::json rows = nlohmann::json::array();
  bool memory_header = false;  // each table's header is printed before its first row
  for (lmo::ref::Format f : formats) {
    for (const std::string& name : lmo::bench::memory_workload_names()) {
      if (!std::regex_search(name, filter)) continue;
      const lmo::bench::Workload w = lmo::bench::memory_workload(name, *runner, f, size);
      if (tty)
        std::fprintf(stderr, "\rbench: %s %s ...   ", w.name.c_str(),
                     lmo::ref::format_name(f).data());
      // The same kernel in cache, against the large size's memcpy: below the goal there, the
      // kernel is compute-bound and no memory-side change can bring it to the goal. Its batches
      // alternate with the large kernel and memcpy runs, so that all three see the same load.
      // Each thread has its own L2: with more threads the in-cache size grows with them, so that
      // they all have rows to split.
      const lmo::bench::Workload cw =
          lmo::bench::memory_workload_in_cache(name, *runner, f, size, kCacheBytes * a.threads);
      lmo::bench::CacheBatches batches(cw.bytes, std::max(w.bytes, kMinBatchBytes), cw.run);
      const lmo::bench::BandwidthSample m =
          lmo::bench::measure_bandwidth(w.bytes, reps, w.run, [&] { batches.time_once(); });
      const lmo::bench::CacheSample c = batches.sample();
      // Every run wrote its whole output and nothing beyond it.
      w.check_written();
      cw.check_written();
      const double cache_ratio = c.bytes_per_s / m.memcpy_bytes_per_s;
      nlohmann::json row = lmo::tools::memory_row(w, backend, f);
      row.update({{"threads", a.threads},
                  {"repetitions", m.repetitions},
                  {"seconds", m.seconds},
                  {"bytes_per_s", m.bytes_per_s},
                  {"memcpy_bytes_per_s", m.memcpy_bytes_per_s},
                  {"ratio", m.ratio},
                  {"cache_size", cw.elements},
                  {"cache_shape", cw.shape},
                  {"cache_bytes", cw.bytes},
                  {"cache_calls", c.calls},
                  {"cache_seconds", c.seconds},
                  {"cache_bytes_per_s", c.bytes_per_s},
                  {"cache_ratio", cache_ratio},
                  {"bound", cache_ratio < kGoalRatio ? "compute" : "memory"}});
      rows.push_back(std::move(row));
      if (!a.json) {
        if (!memory_header) {
          print_header();
          memory_header = true;
        }
        print_row(rows.back());
      }
    }
  }
  // Compute-bound kernels: GFLOP/s over a single-threaded OpenBLAS sgemm of one head's Q Kᵀ.
  bool compute_header = false;
  for (lmo::ref::Format f : formats) {
    for (const std::string& name : lmo::bench::compute_workload_names()) {
      if (!std::regex_search(name, filter)) continue;
      const lmo::bench::ComputeWorkload w = lmo::bench::compute_workload(name, *runner, f, tokens);
      if (tty)
        std::fprintf(stderr, "\rbench: %s %s ...   ", w.name.c_str(),
                     lmo::ref::format_name(f).data());
      const lmo::bench::FlopSample m =
          lmo::bench::measure_flops(w.flops, reps, w.run, w.gemm_m, w.gemm_n, w.gemm_k);
      w.check_written();
      nlohmann::json row = lmo::tools::compute_row(w, backend, f);
      row.update({{"threads", a.threads},
                  {"repetitions", m.repetitions},
                  {"seconds", m.seconds},
                  {"flops_per_s", m.flops_per_s},
                  {"sgemm_flops_per_s", m.sgemm_flops_per_s},
                  {"ratio", m.ratio}});
      rows.push_back(std::move(row));
      if (!a.json) {
        if (!compute_header) {
          print_compute_header();
          compute_header = true;
        }
        print_compute_row(rows.back());
      }
    }
  }
  if (tty) std::fprintf(stderr, "\r%60s\r", "");
  // Every op with a bench shape in its record is measured: none is left out silently.
  const nlohmann::json missing = nlohmann::json::array();
  if (a.json) {
    std::cout << nlohmann::json{{"rows", rows}, {"not_measured", missing}}.dump(2) << "\n";
  } else {
    if (memory_header) {
      std::printf("bytes: each input read once and each output written once; ratio: over a "
                  "memcpy of the same bytes in this run; %d thread(s), median of %d\n",
                  a.threads, reps);
      std::printf("cache: the same kernel on at most %lld KiB of traffic a call per thread "
                  "(whole rows, at least one), batches of calls alternating with the large runs; "
                  "c.ratio: over the same memcpy; bound: compute when c.ratio < %.1f (not even "
                  "in cache at the goal), else memory\n",
                  static_cast<long long>(kCacheBytes >> 10), kGoalRatio);
    }
    if (compute_header) {
      std::printf(
          "%sratio: over OpenBLAS sgemm (one thread) of the shape m x n x k in the JSON "
          "rows, in this run; %d thread(s), median of %d\n",
          kFlopsNote, a.threads, reps);
    }
  }
  return 0;
}
