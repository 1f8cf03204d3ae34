// `lmoracle golden`, `lmoracle check` and `lmoracle ref`: options and runs.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

struct GoldenArgs {
  std::string out;
  std::string filter;
  std::string shard;
  std::string blocks;  // "I/N": part I of N of every case's rows
  std::vector<std::string> merge;
  std::string cases_dir;
  std::vector<std::string> case_files;
  double max_cost = 2e9;
  int threads = 0;  // 0: one per hardware thread
  bool inputs_only = false;
  std::string max_memory;  // "": the default block of rows
  std::optional<uint64_t> seed;  // every case's inputs drawn from this seed instead of its own
};
struct CheckArgs {
  std::string golden;
  std::string actual;
  std::optional<std::string> recipe;  // none = the case's own; "" is bad input
  bool diagnose = false;
  bool json = false;
  std::string max_memory;
};
struct RefArgs {
  std::string op;
  std::vector<std::string> params;
  std::string in;
  std::string out;
  std::string format;
};

CLI::App* add_golden_command(CLI::App& app, GoldenArgs& a);
CLI::App* add_check_command(CLI::App& app, CheckArgs& a);
CLI::App* add_ref_command(CLI::App& app, RefArgs& a);
int run_golden(const GoldenArgs& a);
int run_check(const CheckArgs& a);
int run_ref(const RefArgs& a);
