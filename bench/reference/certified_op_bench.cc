// The cost of exact values per case, three ways in one run ([certified], docs/certified.md): the
// reference formula in plain double (the yardstick), the certified evaluation on balls with its
// rounding decisions, and MPFR. Prints one row per case with the two ratios; a measurement to
// read and report, never a timed assertion.
//
//   build/bench/reference/certified_op_bench [--filter REGEX] [--case-file F]... [--no-mpfr]
#include <chrono>
#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include "oracle/core/case.h"
#include "oracle/core/case_inputs.h"
#include "oracle/core/certified.h"
#include "reference/ball_rounding.h"

namespace {

using lmo::oracle::Case;
using Clock = std::chrono::steady_clock;

template <class F>
double seconds(F&& f) {
  const auto t0 = Clock::now();
  f();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::string filter = ".";
  std::vector<std::string> files;
  bool mpfr = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--filter" && i + 1 < argc) {
      filter = argv[++i];
    } else if (a == "--case-file" && i + 1 < argc) {
      files.push_back(argv[++i]);
    } else if (a == "--no-mpfr") {
      mpfr = false;
    } else {
      std::fprintf(stderr,
                   "usage: certified_op_bench [--filter REGEX] [--case-file F]... [--no-mpfr]\n");
      return 2;
    }
  }
  std::vector<Case> cases;
  if (files.empty()) {
    cases = lmo::oracle::load_case_dir(lmo::oracle::builtin_cases_dir());
  } else {
    for (const std::string& f : files) {
      for (Case& c : lmo::oracle::load_case_file(f)) cases.push_back(std::move(c));
    }
  }
  const std::regex re(filter);
  std::printf("%-48s %10s %10s %10s %8s %8s %10s\n", "case (inputs in its first format)",
              "double s", "ball s", "mpfr s", "ball/dbl", "mpfr/dbl", "undecided");
  for (const Case& c : cases) {
    if (!std::regex_search(c.id, re)) continue;
    const auto op = lmo::oracle::make_op(c);
    const lmo::oracle::InputSet in = lmo::oracle::make_inputs(c, *op, c.formats.front());
    const double t_double = seconds([&] { (void)op->simulated(lmo::ref::Format::f64, in); });
    int64_t undecided = 0, n = 0;
    const double t_ball = seconds([&] {
      const auto balls = op->enclosure(in);
      if (!balls) return;
      for (const auto& o : *balls) {
        for (const lmo::ref::Ball& b : o.values) {
          ++n;
          undecided += lmo::ref::decides_rounding(b, c.formats) ? 0 : 1;
        }
      }
    });
    const double t_mpfr = mpfr ? seconds([&] { (void)op->exact(in); }) : 0.0;
    std::printf("%-48s %10.4f %10.4f %10.4f %8.1f %8.1f %5lld/%lld\n", c.id.c_str(), t_double,
                t_ball, t_mpfr, t_ball / t_double, mpfr ? t_mpfr / t_double : 0.0,
                static_cast<long long>(undecided), static_cast<long long>(n));
  }
  return 0;
}
