#include "drift_command.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "oracle/core/case_error.h"
#include "oracle/core/stopwatch.h"
#include "oracle/drift/drift.h"

namespace {

using lmo::oracle::InputError;

void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
  if (!f) throw InputError(p.string(), "", "could not be written");
}

// Single-quotes s for /bin/sh.
std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

CLI::App* add_drift_command(CLI::App& app, DriftArgs& a) {
  CLI::App* d =
      app.add_subcommand("drift",
                         "Precision drift audit: error of each precision policy against the exact "
                         "reference over a sweep (table, CSV, JSON, plot)");
  d->add_option("--audit", a.audit, "Built-in audit (see `lmoracle list`)")->required();
  d->add_option("--out", a.out_dir,
                "Folder for <audit>.csv, <audit>.json and the plot <audit>.png/.svg");
  d->add_flag("--quick", a.quick, "Short sweep (the tests' setting)");
  d->add_flag("--json", a.json, "Print JSON instead of a table");
  d->add_flag("--no-plot", a.no_plot, "Write CSV and JSON only");
  d->add_option("--seed", a.seed, "Seed of the deterministic inputs");
  d->add_option("--max-cost", a.max_cost,
                "Refuse an audit whose reference cost estimate exceeds this many operations");
  return d;
}

int run_drift(const DriftArgs& a) {
  using namespace lmo::oracle;
  const DriftAudit& audit = find_drift_audit(a.audit);
  DriftOptions o;
  o.quick = a.quick;
  o.seed = a.seed;
  check_drift_cost(audit, o, a.max_cost);  // before any output folder is made
  std::filesystem::path out;
  if (!a.out_dir.empty()) {
    out = a.out_dir;
    std::error_code ec;
    std::filesystem::create_directories(out, ec);
    if (ec || !std::filesystem::is_directory(out)) {
      throw InputError("command line", "--out",
                       "expected a folder that can be created, got \"" + a.out_dir + "\"");
    }
  }
  const bool tty = isatty(STDERR_FILENO) != 0;
  const auto start = SteadyClock::now();
  const auto progress = [&](int64_t done, int64_t total, const std::string& what) {
    if (!tty) return;
    std::fprintf(stderr, "\r\033[K%s [%lld/%lld] %s", audit.name.c_str(),
                 static_cast<long long>(done + 1), static_cast<long long>(total), what.c_str());
    std::fflush(stderr);
  };
  const DriftResult r = run_drift_audit(audit, o, progress);
  if (tty) std::fprintf(stderr, "\r\033[K");
  const double seconds = seconds_since(start);
  const nlohmann::json j = drift_json(r);
  if (a.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << drift_table(r);
    std::printf("\ntime: %.1f s\n", seconds);
  }
  if (out.empty()) return 0;
  const std::filesystem::path csv = out / (r.audit + ".csv");
  const std::filesystem::path json = out / (r.audit + ".json");
  write_file(csv, drift_csv(r));
  write_file(json, j.dump(2) + "\n");
  if (!a.json) std::cout << "wrote " << csv.string() << ", " << json.string() << "\n";
  if (a.no_plot) return 0;
  // The plotting script; LMO_PYTHON overrides the interpreter found at configure time.
  const char* env_python = std::getenv("LMO_PYTHON");
  const std::string python = env_python != nullptr ? env_python : LMO_PYTHON;
  const std::string cmd = shell_quote(python) + " " + shell_quote(LMO_DRIFT_PLOT) + " " +
                          shell_quote(json.string()) + " " + shell_quote((out / r.audit).string()) +
                          (a.json ? " >&2" : "");
  const int rc = std::system(cmd.c_str());
  if (rc != 0) {
    std::cerr << "lmoracle: the plot was not drawn: " << LMO_DRIFT_PLOT << " exited with "
              << (WIFEXITED(rc) ? WEXITSTATUS(rc) : rc)
              << " (matplotlib is installed by tools/setup; --no-plot skips the plot)\n";
    return 2;
  }
  return 0;
}
