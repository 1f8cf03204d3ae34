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
#include "oracle/core/case.h"
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
  std::string detail;    // the first failure: "output grad: element 12: ..."
  std::vector<OutputVerdict> outputs;
  double seconds = 0;  // the backend call and the judging
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

// The judge's reference side of one (case, format), shared by the backends judged on it
// (JudgeReference, judge.h): one per (output index, compute format), made when first needed.
using SharedJudging = std::map<std::pair<size_t, ref::Format>, JudgeReference>;

// One (case, format, backend) evaluation, judged: the building block of verify, and what the
// oracle's own tests call with deliberately wrong backends. With `shared` (empty at the first
// backend of a (case, format), then kept for the others) the verdicts are the same, faster.
VerifyRow run_and_judge(const Case& c, const Op& op, ref::Format storage, Backend& backend,
                        const RunContext& ctx, VerifyTimes* times = nullptr,
                        SharedJudging* shared = nullptr);

std::string to_table(const VerifyReport& r);
nlohmann::json to_json(const VerifyReport& r);

}  // namespace lmo::oracle
