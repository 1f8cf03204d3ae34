// lmoracle: the command-line program. Exit codes: 0 success, 1 a verdict failed, 2 bad usage
// or bad input (the message names what was wrong).
#include "cli_main.h"

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <string>

#include "bench_command.h"
#include "drift_command.h"
#include "golden_command.h"
#include "oracle/backends/system_info.h"
#include "oracle/claims/report.h"
#include "oracle/cases/case.h"
#include "oracle/core/certified.h"
#include "oracle/drift/drift.h"
#include "oracle/verify/listing.h"
#include "oracle/verify/verify.h"
#include "verify_command.h"

namespace {

int run_list(bool json) {
  const lmo::oracle::SystemInfo info = lmo::oracle::system_info();
  const std::vector<lmo::oracle::Case> cases =
      lmo::oracle::load_case_dir(lmo::oracle::builtin_cases_dir());
  if (json) {
    nlohmann::json j = lmo::oracle::to_json(info);
    j.update(lmo::oracle::listing_json(cases));
    for (const auto& a : lmo::oracle::drift_audits()) {
      j["drift_audits"].push_back({{"name", a.name}, {"summary", a.summary}});
    }
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << lmo::oracle::to_text(info) << lmo::oracle::listing_text(cases);
    std::cout << "\nDrift audits (lmoracle drift --audit NAME):\n";
    for (const auto& a : lmo::oracle::drift_audits()) {
      std::cout << "  " << a.name << "  " << a.summary << "\n";
    }
  }
  return 0;
}

}  // namespace

int lmoracle_main(int argc, char** argv) {
  CLI::App app{
      "lmoracle: deterministic reference simulator and test oracle for transformer math"};
  app.set_version_flag("--version", std::string("lmoracle ") + lmo::oracle::version());
  app.require_subcommand(1);
  // Options of the main program may also follow the subcommand.
  app.fallthrough();
  std::string exact = "certified";
  app.add_option("--exact", exact,
                 "How exact values are computed: certified (double-double balls with a rigorous "
                 "radius, MPFR where they do not decide the rounding; the default) or mpfr (MPFR "
                 "only, the arbiter); both give the same bytes")
      ->check(CLI::IsMember({"certified", "mpfr"}));

  bool list_json = false;
  CLI::App* list = app.add_subcommand(
      "list", "Number formats, SIMD targets (compiled and supported), CUDA build and device");
  list->add_flag("--json", list_json, "Print JSON instead of a table");

  // claims: every C- and E-row of the catalog with its evidence (oracle/claims/report.h).
  lmo::oracle::ClaimsOptions claims_opts;
  CLI::App* claims = app.add_subcommand(
      "claims", "Check every claim and erratum of the notes on the reference and kernel backends");
  claims->add_option("--id", claims_opts.id, "One claim or erratum (C01 … C27, E01 … E08)");
  claims->add_option("--backend", claims_opts.backend,
                     "One backend: ref (mp), ref-<format> (f64 f32 tf32 bf16 f16 e4m3 e5m2), "
                     "fast-<target>, fast (every fast target of this CPU) or gpu");
  claims->add_flag("--json", claims_opts.json, "Print JSON instead of a table");

  VerifyArgs verify_args;
  CLI::App* verify = add_verify_command(app, verify_args);
  GoldenArgs golden_args;
  CLI::App* golden = add_golden_command(app, golden_args);
  CheckArgs check_args;
  CLI::App* check = add_check_command(app, check_args);
  RefArgs ref_args;
  CLI::App* ref = add_ref_command(app, ref_args);
  BenchArgs bench_args;
  CLI::App* bench = add_bench_command(app, bench_args);

  DriftArgs drift_args;
  CLI::App* drift = add_drift_command(app, drift_args);

  // CLI11 would report an unknown subcommand as a missing one; name it instead.
  if (argc >= 2 && argv[1][0] != '-') {
    std::string known;
    bool found = false;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      found = found || sub->get_name() == argv[1];
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    if (!found) {
      std::cerr << "lmoracle: unknown subcommand '" << argv[1] << "' (expected one of: " << known
                << ")\n";
      return 2;
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "lmoracle: " << e.what() << "\n(run `lmoracle --help` for usage)\n";
    return 2;
  }

  lmo::oracle::set_exact_path(exact == "mpfr" ? lmo::oracle::ExactPath::kMpfr
                                              : lmo::oracle::ExactPath::kCertified);
  try {
    if (list->parsed()) return run_list(list_json);
    if (claims->parsed()) return lmo::oracle::run_claims(claims_opts, std::cout);
    if (verify->parsed()) return run_verify(verify_args);
    if (golden->parsed()) return run_golden(golden_args);
    if (check->parsed()) return run_check(check_args);
    if (ref->parsed()) return run_ref(ref_args);
    if (bench->parsed()) return run_bench(bench_args);
    if (drift->parsed()) return run_drift(drift_args);
  } catch (const lmo::oracle::InputError& e) {
    std::cerr << "lmoracle: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "lmoracle: " << e.what() << "\n";
    return 2;
  }
  return 2;
}
