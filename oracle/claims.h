// The claims registry: one entry per C-row (claims of the notes) and E-row (errata) of
// ../shared/FORMULAS.md, each with an evaluator that returns its evidence.
//
//  - identity: two computations equal in exact arithmetic. In mp (the `ref` backend) the
//    largest relative residual over the trials must be < 1e-40. In a float format (`ref-<f>`:
//    the reference run on that number type, i.e. the simulated naive kernel) the bound is either
//    0 (both sides perform the same operations in the same order: bitwise equality) or the
//    running error analysis of claims_tracked.h (|A − B| ≤ bound(A) + bound(B), each bound
//    derived per operation from the format's unit roundoff). Each entry names which.
//  - bound: an inequality (a measured maximum, a reach, a cap), checked the same way.
//  - counterexample: the claim is that a property fails; the evaluator finds and prints inputs
//    and the two values that differ.
//  - errata (E-rows): the notes' form and the correct form are both evaluated; the difference is
//    demonstrated with a printed counterexample and the correct form's identity is checked.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reference/formats.h"

namespace lmo::oracle {

enum class ClaimKind { kIdentity, kBound, kCounterexample };
enum class ClaimStatus { kHolds, kRefutedAsStated, kErratumShown, kFails };

std::string_view claim_kind_name(ClaimKind k);      // "identity", "bound", "counterexample"
std::string_view claim_status_name(ClaimStatus s);  // "holds", "refuted as stated", …, "FAILS"

// Where a claim can be evaluated. Today: `ref` (the reference on mp) and `ref-<format>` (the
// reference on the simulated format: f64, f32, tf32, bf16, f16, e4m3, e5m2).
struct ClaimBackend {
  std::string name;
  std::optional<ref::Format> format;  // empty: mp
};

// Every backend this build can evaluate claims on, in report order.
std::vector<ClaimBackend> claim_backends();

// The backend of that name, or empty when there is none. EXTENSION POINT: the `fast-<target>`
// backends (one per Highway target the CPU supports, fast/targets.h) and `gpu` (when
// gpu/api.h finds a device) plug in here, with the per-claim kernels they run in
// claims_eval.h's for_backend; until their kernels exist these names resolve to nothing.
std::optional<ClaimBackend> resolve_claim_backend(std::string_view name);

// Evidence of one claim on one backend.
struct BackendEvidence {
  std::string backend;
  bool applicable = true;  // false: the format cannot hold the claim's inputs (see note)
  int trials = 0;          // trials evaluated (not skipped)
  double residual = 0;     // largest |A − B| / scale over the trials
  double bound = 0;        // the bound, same normalization, at the trial with the largest ratio
  double ratio = 0;        // largest |A − B| / bound (≤ 1 holds); in mp |A − B| / (1e-40 scale)
  bool ok = true;
  std::string note;
};

// A counterexample: the inputs, and the two values that differ.
struct Counterexample {
  std::string inputs;
  std::string first_label, first;
  std::string second_label, second;
};

struct ClaimEvidence {
  ClaimStatus status = ClaimStatus::kFails;
  int trials = 0;
  std::vector<BackendEvidence> backends;
  std::optional<Counterexample> counterexample;
  std::string summary;  // one line: what was measured (a maximum and where, a count)
};

struct ClaimContext {
  std::vector<ClaimBackend> backends;  // where identities and bounds are evaluated
  uint64_t seed = 20261122;            // inputs are oracle/inputs.h streams of (seed, name)
};

using ClaimEvaluator = std::function<ClaimEvidence(const ClaimContext&)>;

struct Claim {
  std::string id;         // "C05", "E02"
  std::string source;     // seed note and section
  std::string statement;  // short
  ClaimKind kind;
  std::string float_bound;  // where the float formats' bound comes from
  ClaimEvaluator evaluate;
};

// Every entry, in ID order (C01 … C27, E01 … E08).
std::span<const Claim> claims_registry();
// The entry with this ID, or nullptr.
const Claim* find_claim(std::string_view id);

}  // namespace lmo::oracle
