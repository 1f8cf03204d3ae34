// Precision drift audits (`lmoracle drift`): for one op and a sweep of one parameter, the error
// of each precision policy against the exact (mp) reference, per sweep point.
//
// A precision policy is storage format × compute format × accumulation format, written
// "storage/compute/accum" (bf16/f32/f32: bf16 inputs and outputs, f32 arithmetic, f32 sums),
// simulated with the reference's number types (a Sim<F> rounds after every operation), plus
// variants that name where a kernel's shortcut lives ("f32 angle", "one-pass variance") and the
// fast (Highway) kernels themselves where the op has one. The GPU backend is a policy only on a
// machine with a CUDA device; elsewhere the audit says so in its notes.
//
// Every sweep point's inputs are generated once, as bfloat16 values in a range that every
// storage format from bf16 up holds exactly, so one exact reference serves every policy and the
// measured error is the policy's arithmetic and its output store, not a different input. fp8
// policies round their inputs to fp8 on purpose: that storage is what they audit.
//
// Per (panel, policy, sweep point) the audit records, over the elements where the exact value
// and the policy's output are finite (oracle/judge/metrics.h, in the policy's output format):
//   max and mean |ulps| to the correctly rounded exact value, the maximum relative error, and
//   the significant bits −log2(max relative error) (clamped to [0, p] as metrics.h does);
// and the number of outputs that came out NaN or infinite where the exact value is finite (their
// relative error is counted as +inf, so significant bits drop to 0).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "reference/formats.h"
#include "reference/number_types.h"

namespace lmo::oracle {

struct DriftStats {
  int64_t compared = 0;   // elements with a finite exact value and a finite output
  int64_t nonfinite = 0;  // elements with a finite exact value and a NaN/inf output
  double max_ulps = 0;
  double mean_ulps = 0;
  double max_rel = 0;   // +inf when any output was non-finite
  double sig_bits = 0;  // −log2(max_rel), clamped to [0, p]
  // Normwise relative error sqrt(Σ(y − x)² / Σx²) over the compared elements (+inf with any
  // non-finite output, 0 when Σx² = 0 and every y = x): free of the element-wise measures'
  // blow-up where one output cancels to near zero, and comparable across output formats.
  double norm_rel = 0;
};

// Collects the metrics of one (panel, policy, sweep point) in the policy's output format.
class DriftAccumulator {
 public:
  explicit DriftAccumulator(ref::Format output) : format_(output) {}
  // `got` is the policy's value; it is rounded to the output format first (the kernel's store:
  // exact when the policy computed in that format). Exact values that are not finite in mp (none
  // of the audits make any) are skipped.
  void add(const ref::mp& exact, double got);
  // The same for a value already held as a pattern of the output format.
  void add_bits(const ref::mp& exact, uint64_t got_bits);
  // Merges another accumulator of the same format (the sweep point's rows, computed apart).
  void merge(const DriftAccumulator& o);
  DriftStats result() const;
  ref::Format format() const { return format_; }

 private:
  ref::Format format_;
  int64_t compared_ = 0, nonfinite_ = 0;
  double max_ulps_ = 0, sum_ulps_ = 0;
  long double sum_sq_err_ = 0, sum_sq_exact_ = 0;
  double max_rel_ = 0;
};

struct DriftPolicy {
  std::string name;         // unique within the audit, shown in the table, CSV and plot legend
  std::string description;  // what is held in which format
};

struct DriftRow {
  std::string panel;
  std::string policy;
  double x = 0;  // the sweep parameter's value at this point
  DriftStats stats;
};

struct DriftResult {
  std::string audit;
  std::string op;
  std::string description;            // what the audit shows and how to read it
  std::string x_label;                // the swept parameter
  bool x_log = true;                  // geometric sweep: plot x on a log scale
  std::vector<std::string> panels;    // one plot panel each (an op, a base, an offset …)
  std::vector<DriftPolicy> policies;  // legend order
  std::vector<DriftRow> rows;         // panel-major, then policy, then x ascending
  std::vector<std::string> notes;     // policies not run here and why, findings
  bool quick = false;
  uint64_t seed = 0;
};

struct DriftOptions {
  bool quick = false;  // the tests' sweep: fewer and smaller points
  uint64_t seed = 20240601;
};

// Called once per sweep point before it is computed.
using DriftProgress = std::function<void(int64_t done, int64_t total, const std::string& what)>;

struct DriftAudit {
  std::string name;
  std::string summary;
  DriftResult (*run)(const DriftOptions&, const DriftProgress&);
  // Scalar operations of the audit's exact (mp) reference runs over its whole sweep, roughly:
  // `lmoracle drift --max-cost` refuses an audit above its limit before running it (the same
  // measure as Op::cost, which verify and golden limit).
  double (*cost)(const DriftOptions&);
};

// Every built-in audit, in the order `lmoracle list` shows them.
const std::vector<DriftAudit>& drift_audits();
// The audit of that name; throws InputError("command line", "--audit", …) naming the choices.
const DriftAudit& find_drift_audit(const std::string& name);
// InputError("command line", "--max-cost", …) when the audit's cost estimate exceeds max_cost,
// naming the audit, the estimate and the limit.
void check_drift_cost(const DriftAudit& audit, const DriftOptions& o, double max_cost);
// Runs it: the audit's result with the options recorded and the GPU note added.
DriftResult run_drift_audit(const DriftAudit& audit, const DriftOptions& o,
                            const DriftProgress& progress);

// The row of (panel, policy, x); throws std::out_of_range when absent.
const DriftRow& drift_row(const DriftResult& r, const std::string& panel, const std::string& policy,
                          double x);
// The x values of one panel's policy, ascending.
std::vector<double> drift_xs(const DriftResult& r, const std::string& panel,
                             const std::string& policy);

// Output. CSV: a header line and one line per row (panel,policy,x,max_ulps,mean_ulps,max_rel,
// sig_bits,norm_rel,compared,nonfinite; inf written as "inf"). JSON: the result with rows as
// objects (max_rel and norm_rel +inf written as the string "inf": JSON has no infinity). Text: a
// table per panel.
std::string drift_csv(const DriftResult& r);
nlohmann::json drift_json(const DriftResult& r);
std::string drift_table(const DriftResult& r);

}  // namespace lmo::oracle
