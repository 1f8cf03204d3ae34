// The verify driver: every selected case × storage format × backend, judged per output against
// the exact reference with the op's policy (policy_table.h). One row per (case, backend,
// format); a row passes when every output passes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "oracle/backends/backend.h"
#include "oracle/cases/case.h"
#include "oracle/judge/judge.h"

namespace lmo::oracle {

struct VerifyOptions {
  std::vector<std::string> backends;  // empty: every backend whose in_default_run() is true
  std::vector<ref::Format> formats;   // empty: each case's own formats; else the intersection
  std::string filter;                 // ECMAScript regex searched in case IDs; "" = all
  // Reference cost limit per case (scalar operations, Op::cost() summed over its formats).
  double max_cost = 2e9;
};

struct OutputVerdict {
  std::string name;
  Verdict verdict;
};

struct VerifyRow {
  std::string case_id;
  std::string op;
  std::string backend;
  ref::Format format = ref::Format::f32;
  bool pass = true;
  int64_t max_ulps = 0;  // over the real outputs' finite elements
  double max_rel = 0;    // likewise
  // The recipe it was judged under (recipe.h's text; judged_recipe of the case's recipe and the
  // backend's declaration for the op).
  std::string recipe = "strict";
  std::string detail;  // the first failure: "output grad: element 12: ..."
  std::vector<OutputVerdict> outputs;
  double seconds = 0;  // the backend call
};

struct VerifyTimes {
  double inputs = 0;     // generating inputs
  double reference = 0;  // the exact mp runs
  double naive = 0;      // the simulated runs (the naive yardstick and ref-<format> backends)
  double backends = 0;   // backend calls other than the reference ones
  double judging = 0;
};

struct VerifyReport {
  std::vector<VerifyRow> rows;
  int64_t cases = 0;
  int64_t passed = 0;
  int64_t failed = 0;
  int64_t skipped = 0;  // (case, format, backend) combinations a backend does not support
  // Why they were skipped: per reason (Backend::unsupported), the backends that gave it, in order
  // of first appearance, and how many combinations it covers. Not a verdict: nothing ran.
  struct Skip {
    std::string reason;
    std::vector<std::string> backends;
    int64_t count = 0;
  };
  std::vector<Skip> skips;
  VerifyTimes times;
};

// The backends named (all of them in order when names is empty: those in the default run);
// "fast" names every fast-<target> backend (backend_selected_by).
// Throws InputError (field "--backend") for an unknown name, listing the known ones.
std::vector<Backend*> select_backends(const std::vector<std::unique_ptr<Backend>>& all,
                                      const std::vector<std::string>& names);

// Cases whose ID matches the filter (InputError for an invalid regex, field "--filter").
std::vector<Case> filter_cases(const std::vector<Case>& cases, const std::string& filter);

// Bytes of a case's inputs and outputs in its widest format, from the op's declared shapes
// (nothing is allocated): what an over-limit case would need at the least.
double case_bytes(const Case& c, const Op& op);
// Throws InputError naming the case when its cost exceeds the limit (with its estimate, the
// limit and case_bytes); checked for every case before anything runs or is allocated.
void check_costs(const std::vector<Case>& cases, const VerifyOptions& o);

// progress(done, total, what) is called before each (case, format).
VerifyReport verify(const std::vector<Case>& cases, const std::vector<Backend*>& backends,
                    const VerifyOptions& o,
                    const std::function<void(int64_t, int64_t, const std::string&)>& progress = {});

// One (case, format), judged for each backend (one row each, in order): the building block of
// verify, and what the oracle's own tests call with deliberately wrong backends. The backends
// run the whole op; their outputs are judged together (judging.h), sharing the reference's work.
// block_rows: -1 as rows_per_block decides (at real shapes an op with independent rows is judged
// a block of rows at a time, with the same verdicts; cross-entropy at 4096 × 128256 has 525M
// outputs, whose exact values as mp would take 29 GB), 0 the whole op, > 0 rows per block. A
// row's seconds are its backend call's: the judging is shared.
std::vector<VerifyRow> run_and_judge(const Case& c, const Op& op, ref::Format storage,
                                     const std::vector<Backend*>& backends,
                                     const RunContext& ctx, VerifyTimes* times = nullptr,
                                     int64_t block_rows = -1);
// The same for one backend.
VerifyRow run_and_judge(const Case& c, const Op& op, ref::Format storage, Backend& backend,
                        const RunContext& ctx, VerifyTimes* times = nullptr);

std::string to_table(const VerifyReport& r);
nlohmann::json to_json(const VerifyReport& r);

}  // namespace lmo::oracle
