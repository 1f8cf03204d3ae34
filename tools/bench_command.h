// `lmoracle bench`: memory-bound kernels' achieved bandwidth as a ratio to a memcpy of the same
// traffic measured in the same run (bench/bandwidth.h), as a table or JSON rows.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

struct BenchArgs {
  std::string backend = "fast";
  std::vector<std::string> formats;
  std::string filter;
  int threads = 1;
  int64_t size = int64_t{1} << 25;  // elements of each kernel's main input
  int repetitions = 5;
  bool quick = false;
  bool json = false;
};

CLI::App* add_bench_command(CLI::App& app, BenchArgs& args);
// 0 on success; bad input throws lmo::oracle::InputError (exit 2 in main).
int run_bench(const BenchArgs& args);
