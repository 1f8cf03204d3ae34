// The cost of exact values per case, three ways in one run ([certified], docs/certified.md): the
// reference formula in plain double (the yardstick), the certified evaluation on balls with its
// rounding decisions, and MPFR. Prints one row per case with the two ratios; a measurement to
// read and report, never a timed assertion. The first run of each way is what one `golden`
// command pays (one-time tables included); with --repeat N the best of N runs is printed beside
// it, the steady cost at that size.
//
//   build/bench/reference/certified_op_bench [--filter REGEX] [--case-file F]... [--no-mpfr]
//                                            [--repeat N]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "oracle/cases/case.h"
#include "oracle/cases/case_inputs.h"
#include "oracle/core/certified.h"
#include "oracle/core/stopwatch.h"
#include "reference/ball_rounding.h"

namespace {

using lmo::oracle::Case;
using lmo::oracle::seconds_since;
using lmo::oracle::SteadyClock;

template <class F>
double seconds(F&& f) {
  const auto t0 = SteadyClock::now();
  f();
  return seconds_since(t0);
}

// The first run's time and the best of `repeat` runs.
struct Times {
  double first = 0, best = 0;
};
template <class F>
Times timed(int repeat, F&& f) {
  Times t;
  t.first = t.best = seconds(f);
  for (int i = 1; i < repeat; ++i) t.best = std::min(t.best, seconds(f));
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  std::string filter = ".";
  std::vector<std::string> files;
  bool mpfr = true;
  int repeat = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeat" && i + 1 < argc) {
      repeat = std::atoi(argv[++i]);
      if (repeat < 1 || repeat > 1000) {
        std::fprintf(stderr, "certified_op_bench: --repeat: expected 1 … 1000, got %s\n", argv[i]);
        return 2;
      }
    } else if (a == "--filter" && i + 1 < argc) {
      filter = argv[++i];
    } else if (a == "--case-file" && i + 1 < argc) {
      files.push_back(argv[++i]);
    } else if (a == "--no-mpfr") {
      mpfr = false;
    } else {
      std::fprintf(stderr,
                   "usage: certified_op_bench [--filter REGEX] [--case-file F]... [--no-mpfr] "
                   "[--repeat N]\n");
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
  std::printf("%-48s %10s %10s %10s %8s %10s %10s %8s %8s %10s\n",
              "case (inputs in its first format)", "double s", "ball s", "mpfr s", "ball/dbl",
              "best dbl s", "best ball", "best b/d", "mpfr/dbl", "undecided");
  for (const Case& c : cases) {
    if (!std::regex_search(c.id, re)) continue;
    const auto op = lmo::oracle::make_op(c);
    const lmo::oracle::InputSet in = lmo::oracle::make_inputs(c, *op, c.formats.front());
    const Times t_double = timed(repeat, [&] { (void)op->simulated(lmo::ref::Format::f64, in); });
    int64_t undecided = 0, n = 0;
    const Times t_ball = timed(repeat, [&] {
      undecided = n = 0;
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
    std::printf("%-48s %10.4f %10.4f %10.4f %8.1f %10.4f %10.4f %8.1f %8.1f %5lld/%lld\n",
                c.id.c_str(), t_double.first, t_ball.first, t_mpfr, t_ball.first / t_double.first,
                t_double.best, t_ball.best, t_ball.best / t_double.best,
                mpfr ? t_mpfr / t_double.first : 0.0, static_cast<long long>(undecided),
                static_cast<long long>(n));
  }
  return 0;
}
