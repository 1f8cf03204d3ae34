#include "verify_command.h"

#include "memory_option.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <optional>

#include "oracle/backends/backend.h"
#include "oracle/claims/report.h"
#include "oracle/cases/case.h"
#include "oracle/core/certified.h"
#include "oracle/ops/registry.h"
#include "oracle/verify/verify.h"

namespace {

using lmo::oracle::InputError;

std::vector<lmo::ref::Format> parse_formats(const std::vector<std::string>& names) {
  std::vector<lmo::ref::Format> out;
  for (const std::string& n : names) {
    const auto d = lmo::ref::parse_dtype(n);
    if (!d || !lmo::ref::is_float(*d)) {
      throw InputError("command line", "--format",
                       "expected a format name (f64, f32, tf32, bf16, f16, e4m3, e5m2), got \"" +
                           n + "\"");
    }
    out.push_back(lmo::ref::dtype_format(*d));
  }
  return out;
}

// --recipe: the cases it applies to take it; the others keep their own. None: bad input.
void apply_recipe(std::vector<lmo::oracle::Case>& cases, const std::string& text) {
  lmo::oracle::Recipe r;
  try {
    r = lmo::oracle::parse_recipe(text);
  } catch (const lmo::oracle::RecipeError& e) {
    throw InputError("command line", "--recipe", e.what());
  }
  std::string why;
  int64_t applied = 0;
  for (lmo::oracle::Case& c : cases) {
    try {
      const std::unique_ptr<lmo::oracle::Op> op = lmo::oracle::make_op(c);
      for (lmo::ref::Format f : c.formats) {
        (void)lmo::oracle::bind_recipe(r, c.op, *op, f);
      }
      c.recipe = r;
      ++applied;
    } catch (const lmo::oracle::RecipeError& e) {
      if (why.empty()) why = e.what();
    }
  }
  if (applied == 0) {
    throw InputError("command line", "--recipe",
                     "applies to none of the selected cases" + (why.empty() ? "" : ": " + why));
  }
}

}  // namespace

CLI::App* add_verify_command(CLI::App& app, VerifyArgs& a) {
  CLI::App* v = app.add_subcommand(
      "verify", "Run the backends on the cases and judge them against the exact reference");
  v->add_option("--backend", a.backends,
                "Backends to run (repeatable; \"fast\" = every fast-<target>; default: every "
                "backend of the default run, see `lmoracle list`)");
  v->add_option("--format", a.formats, "Storage formats to run (repeatable; default: the case's)");
  v->add_option("--filter", a.filter, "Regular expression searched in case IDs");
  v->add_option("--cases", a.cases_dir, "Folder of case files (default: the built-in cases/)");
  v->add_option("--case-file", a.case_files, "A case file to run instead (repeatable)");
  v->add_option("--max-cost", a.max_cost,
                "Refuse cases whose reference cost estimate exceeds this many operations");
  v->add_option("--max-memory", a.max_memory,
                "SIZE (8G, 512M): the working set of one block of rows where an op with "
                "independent rows is judged a block at a time (docs/scale.md)");
  v->add_option("--recipe", a.recipe,
                "Judge every case the recipe applies to under it instead of the case's own (" +
                    lmo::oracle::named_recipe_names() + ", or point=value,…)");
  v->add_flag("--json", a.json, "Print JSON instead of a table");
  v->add_flag("--no-claims", a.no_claims,
              "Skip the claims summary (run by default with the whole built-in case set)");
  return v;
}

int run_verify(const VerifyArgs& a) {
  using namespace lmo::oracle;
  std::vector<Case> cases;
  if (!a.case_files.empty()) {
    for (const std::string& f : a.case_files) {
      for (Case& c : load_case_file(f)) cases.push_back(std::move(c));
    }
  } else {
    cases = load_case_dir(a.cases_dir.empty() ? builtin_cases_dir() : a.cases_dir);
  }
  VerifyOptions o;
  o.backends = a.backends;
  o.formats = parse_formats(a.formats);
  o.filter = a.filter;
  if (!(a.max_cost > 0)) {
    throw InputError("command line", "--max-cost", "expected a positive number");
  }
  o.max_cost = a.max_cost;
  apply_max_memory(a.max_memory);
  cases = filter_cases(cases, o.filter);
  if (a.recipe) apply_recipe(cases, *a.recipe);
  const auto all = available_backends();
  const std::vector<Backend*> backends = select_backends(all, o.backends);
  check_costs(cases, o);

  const bool tty = isatty(STDERR_FILENO) != 0;
  const auto progress = [&](int64_t done, int64_t total, const std::string& what) {
    if (!tty) return;
    std::fprintf(stderr, "\r\033[K[%lld/%lld] %s", static_cast<long long>(done + 1),
                 static_cast<long long>(total), what.c_str());
    std::fflush(stderr);
  };
  const VerifyReport r = verify(cases, backends, o, progress);
  // The claims registry is part of the main job: the whole built-in case set, unfiltered.
  const bool with_claims = !a.no_claims && a.case_files.empty() && a.cases_dir.empty() &&
                           a.filter.empty() && a.backends.empty() && a.formats.empty();
  std::optional<ClaimsSummary> claims;
  if (with_claims) {
    if (tty) std::fprintf(stderr, "\r\033[Kclaims ...");
    claims = summarize_claims();
  }
  if (tty) std::fprintf(stderr, "\r\033[K");
  const int claims_failed = claims ? claims->fails : 0;
  if (a.json) {
    nlohmann::json j = to_json(r);
    if (claims) j["claims"] = claims->json;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << to_table(r);
    if (claims) std::cout << "\n" << to_text(*claims);
    std::printf("\ntime: inputs %.1f s, reference %.1f s, naive runs %.1f s, backends %.1f s, "
                "judging %.1f s\n",
                r.times.inputs, r.times.reference, r.times.naive, r.times.backends,
                r.times.judging);
    // How the exact values were had: by certified balls, or recomputed in MPFR (and why).
    std::cout << lmo::oracle::exact_report() << "\n";
    // A claim that FAILS counts as one failed check.
    std::cout << "verify: " << r.passed << " passed, " << r.failed + claims_failed << " failed";
    // Backends without a kernel for an op (or a format) skip it: listed above, not a failure.
    if (r.skipped > 0) std::cout << ", " << r.skipped << " skipped";
    std::cout << "\n";
  }
  return r.failed + claims_failed > 0 ? 1 : 0;
}
