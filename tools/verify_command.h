// `lmoracle verify`: options, the run with a progress line, the table or JSON, the exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

struct VerifyArgs {
  std::vector<std::string> backends;
  std::vector<std::string> formats;
  std::string filter;
  std::string cases_dir;
  std::vector<std::string> case_files;
  double max_cost = 2e9;
  std::string max_memory;  // "": the default block of rows
  bool json = false;
  bool no_claims = false;
  std::optional<std::string> recipe;  // none = each case's own; "" is bad input
};

CLI::App* add_verify_command(CLI::App& app, VerifyArgs& args);
// 0 all passed, 1 any failed; bad input throws lmo::oracle::InputError (exit 2 in main).
int run_verify(const VerifyArgs& args);
