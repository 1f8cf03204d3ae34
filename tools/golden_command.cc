#include "golden_command.h"

#include "memory_option.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "oracle/cases/case.h"
#include "oracle/core/certified.h"
#include "oracle/check/check.h"
#include "oracle/golden/golden.h"
#include "oracle/golden/safetensors.h"
#include "oracle/golden/user_ref.h"
#include "oracle/verify/verify.h"
#include "reference/parallel.h"

using lmo::oracle::InputError;

CLI::App* add_golden_command(CLI::App& app, GoldenArgs& a) {
  CLI::App* g = app.add_subcommand(
      "golden", "Write one golden safetensors file per case, and a manifest with their SHA-256");
  g->add_option("--out", a.out, "Output folder");
  g->add_option("--filter", a.filter, "Regular expression searched in case IDs");
  g->add_option("--shard", a.shard, "I/N: write only shard I (0-based) of N");
  g->add_option("--blocks", a.blocks,
                "I/N: write only part I (0-based) of N of every case's rows (an op with "
                "independent rows), for --merge to join into the whole files");
  g->add_option("--merge", a.merge,
                "Join the shard manifests, or the row parts, of these folders into the first");
  g->add_option("--cases", a.cases_dir, "Folder of case files (default: the built-in cases/)");
  g->add_option("--case-file", a.case_files, "A case file to use instead (repeatable)");
  g->add_option("--max-cost", a.max_cost,
                "Refuse cases whose reference cost estimate exceeds this many operations");
  g->add_option("--max-memory", a.max_memory,
                "SIZE (8G, 512M): the working set of one block of rows where an op with "
                "independent rows is written a block at a time (docs/scale.md)");
  g->add_flag("--inputs-only", a.inputs_only,
              "Write the inputs without the outputs (a challenge: `check` computes the answers "
              "only after reading the kernel's)");
  g->add_option("--seed", a.seed,
                "Draw every case's inputs from this seed instead of its own (inputs the kernel "
                "cannot have seen; the files' case JSON records it)");
  g->add_option("--threads", a.threads,
                "Threads of the reference (default: one per hardware thread); the files do "
                "not depend on it")
      ->check(CLI::Range(0, 4096));
  return g;
}

CLI::App* add_check_command(CLI::App& app, CheckArgs& a) {
  CLI::App* c = app.add_subcommand(
      "check",
      "Judge a file of a kernel's outputs (out.<name>) against a golden file (full or "
      "inputs-only)");
  c->add_option("--golden", a.golden, "The golden file")->required();
  c->add_option("--actual", a.actual, "The kernel's outputs (safetensors)")->required();
  c->add_option("--recipe", a.recipe,
                 "The rounding recipe the kernel follows: a name (" +
                     lmo::oracle::named_recipe_names() +
                     "), point=value,… or NAME,point=value (default: the case's, else strict)");
  c->add_flag("--diagnose", a.diagnose,
              "Rank the recipes by how closely each reproduces the outputs, even on a pass");
  c->add_flag("--json", a.json, "Print JSON instead of text");
  c->add_option("--max-memory", a.max_memory,
                "SIZE (8G, 512M): the working set of one block of rows where an op with "
                "independent rows is judged a block at a time (docs/scale.md)");
  return c;
}

CLI::App* add_ref_command(CLI::App& app, RefArgs& a) {
  CLI::App* r = app.add_subcommand(
      "ref", "Evaluate the reference on your own tensors and write correctly rounded outputs");
  r->add_option("--op", a.op, "The op (see `lmoracle list`)")->required();
  r->add_option("--param", a.params, "KEY=VALUE, repeatable: the op's parameters");
  r->add_option("--in", a.in, "Safetensors file with the op's inputs by name")->required();
  r->add_option("--out", a.out, "Output safetensors file (a golden file)")->required();
  r->add_option("--format", a.format, "Output format (default: the inputs')");
  return r;
}

int run_golden(const GoldenArgs& a) {
  using namespace lmo::oracle;
  if (!a.merge.empty()) {
    std::vector<std::filesystem::path> dirs(a.merge.begin(), a.merge.end());
    const int64_t n = merge_golden(dirs);
    std::cout << "golden: merged " << n << " files into " << dirs[0].string() << "/manifest.json\n";
    return 0;
  }
  if (a.out.empty()) throw InputError("command line", "--out", "expected an output folder");
  apply_max_memory(a.max_memory);
  if (a.threads > 0) lmo::ref::set_reference_threads(a.threads);
  std::vector<Case> cases;
  if (!a.case_files.empty()) {
    for (const std::string& f : a.case_files) {
      for (Case& c : load_case_file(f)) cases.push_back(std::move(c));
    }
  } else {
    cases = load_case_dir(a.cases_dir.empty() ? builtin_cases_dir() : a.cases_dir);
  }
  cases = filter_cases(cases, a.filter);
  if (a.seed) {
    for (Case& c : cases) {
      nlohmann::json source = c.source;
      source["seed"] = *a.seed;
      c = parse_case(source, c.file, c.path);
    }
  }
  if (!a.blocks.empty() && (!a.shard.empty() || a.inputs_only)) {
    throw InputError("command line", "--blocks",
                     a.inputs_only ? "an inputs-only file has no rows of outputs to split"
                                   : "--shard spreads cases and --blocks the rows of each: use one");
  }
  GoldenShard shard = a.shard.empty() ? GoldenShard{} : parse_shard(a.shard);
  if (!a.blocks.empty()) {
    shard = parse_shard(a.blocks, "--blocks");
    shard.rows = true;
  }
  VerifyOptions limits;
  limits.max_cost = a.max_cost;
  if (shard.rows) {
    // A part evaluates 1/N of each case's rows: the limit is on the part's cost.
    limits.max_cost *= static_cast<double>(shard.count);
    check_costs(cases, limits);
  } else {
    check_costs(shard_cases(cases, shard), limits);
  }
  const bool tty = isatty(STDERR_FILENO) != 0;
  const auto progress = [&](int64_t done, int64_t total, const std::string& id) {
    if (!tty) return;
    std::fprintf(stderr, "\r\033[K[%lld/%lld] %s", static_cast<long long>(done + 1),
                 static_cast<long long>(total), id.c_str());
    std::fflush(stderr);
  };
  const std::vector<GoldenEntry> entries = write_golden(
      cases, a.out, shard, progress, a.inputs_only ? GoldenKind::kInputsOnly : GoldenKind::kFull);
  if (tty) std::fprintf(stderr, "\r\033[K");
  int64_t skipped = 0;
  for (const GoldenEntry& e : entries) skipped += e.skipped;
  std::cout << "golden: " << entries.size() << " files in " << a.out << " ("
            << entries.size() - static_cast<size_t>(skipped) << " written, " << skipped
            << " already up to date)\n";
  std::cout << lmo::oracle::exact_report() << "\n";
  return 0;
}

int run_check(const CheckArgs& a) {
  apply_max_memory(a.max_memory);
  lmo::oracle::CheckOptions o;
  o.diagnose = a.diagnose;
  if (a.recipe) {
    try {
      o.recipe = lmo::oracle::parse_recipe(*a.recipe);
    } catch (const lmo::oracle::RecipeError& e) {
      throw InputError("command line", "--recipe", e.what());
    }
  }
  lmo::oracle::CheckReport r;
  try {
    r = lmo::oracle::check_golden(a.golden, a.actual, o);
  } catch (const lmo::oracle::RecipeError& e) {
    throw InputError("command line", "--recipe", e.what());
  }
  if (a.json) {
    std::cout << lmo::oracle::to_json(r).dump(2) << "\n";
  } else {
    std::cout << lmo::oracle::to_text(r);
  }
  return r.pass ? 0 : 1;
}

int run_ref(const RefArgs& a) {
  const lmo::oracle::SafetensorsContent out =
      lmo::oracle::user_reference(a.op, a.params, a.in, a.format);
  lmo::oracle::write_safetensors(a.out, out);
  std::cout << "ref: wrote " << out.tensors.size() << " tensors to " << a.out << "\n";
  return 0;
}
