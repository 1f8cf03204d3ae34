// `lmoracle drift`: run one built-in precision drift audit (oracle/drift/drift.h), print its table (or
// JSON), write CSV and JSON into --out DIR and draw the plot with tools/drift_plot.py.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

struct DriftArgs {
  std::string audit;
  std::string out_dir;
  bool quick = false;
  bool json = false;
  bool no_plot = false;
  uint64_t seed = 20240601;
  double max_cost = 2e9;  // the reference cost limit, as verify's and golden's
};

CLI::App* add_drift_command(CLI::App& app, DriftArgs& args);
// 0 on success; bad input throws lmo::oracle::InputError (exit 2 in main); a plot that could
// not be drawn is exit 2 with the plotting script's message.
int run_drift(const DriftArgs& args);
