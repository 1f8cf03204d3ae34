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
#include <memory>
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

class Backend;

// Where a claim can be evaluated:
//  - `ref` (the reference on mp) and `ref-<format>` (the reference on the simulated format: f64,
//    f32, tf32, bf16, f16, e4m3, e5m2), through the claims' number-type templates;
//  - every kernel backend of available_backends() (backend.h: `fast-<target>`, one per Highway
//    target the CPU supports, and `gpu` once a device backend registers there): the claim's
//    computations run as oracle ops through Backend::run (claims_kernel.h). A claim whose ops
//    have no kernel on that backend reports so (applicable = false), never a silent pass.
struct ClaimBackend {
  std::string name;
  std::optional<ref::Format> format;  // reference backends: empty for mp
  std::shared_ptr<Backend> kernel;    // kernel backends: the backend the ops run on
};

// Every backend this build can evaluate claims on, in report order: the reference backends, then
// the kernel backends this machine runs.
std::vector<ClaimBackend> claim_backends();

// The backends a --backend value names: one by its name, or `fast` for every fast-<target> this
// CPU supports. Empty when it names nothing here.
std::vector<ClaimBackend> resolve_claim_backends(std::string_view name);

// Evidence of one claim on one backend.
struct BackendEvidence {
  std::string backend;
  // false: the format cannot hold the claim's inputs, or the backend has no kernel for the
  // claim's ops, or the claim is reference-only (see note)
  bool applicable = true;
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
  uint64_t seed = 20261122;            // inputs are oracle/core/inputs.h streams of (seed, name)
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
