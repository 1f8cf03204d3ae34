#include "oracle/claims/report.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <sstream>
#include <stdexcept>

namespace lmo::oracle {
namespace {

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", v);
  return buf;
}

// The claim's evaluator, with an exception turned into a FAILS (a claim that cannot be
// evaluated has not been shown to hold). Claims decided in exact arithmetic (the counterexamples
// C03, C04, C22 and the errata: a kernel's rounding can neither add to nor take from a
// counterexample found in mp; the integer counts C18, C19, C23) answer for `ref` only: each
// kernel backend of ctx gets an n/a row saying so, so that the report shows which claims ran
// on the kernels.
ClaimEvidence evaluate(const Claim& c, const ClaimContext& ctx) {
  ClaimEvidence ev;
  try {
    ev = c.evaluate(ctx);
  } catch (const std::exception& e) {
    ev.status = ClaimStatus::kFails;
    ev.summary = std::string("evaluator threw: ") + e.what();
    return ev;
  }
  for (const ClaimBackend& b : ctx.backends) {
    if (!b.kernel) continue;
    const bool present = std::any_of(ev.backends.begin(), ev.backends.end(),
                                     [&](const BackendEvidence& e) { return e.backend == b.name; });
    if (present) continue;
    BackendEvidence na;
    na.backend = b.name;
    na.applicable = false;
    std::string why = c.float_bound;
    if (why.rfind("n/a: ", 0) == 0) why = why.substr(5);
    na.note = "n/a: reference only (" + why + ")";
    ev.backends.push_back(na);
  }
  return ev;
}

// Whether the claim ran on that kernel backend (its row is applicable).
bool ran_on(const ClaimEvidence& ev, const std::string& backend) {
  return std::any_of(ev.backends.begin(), ev.backends.end(), [&](const BackendEvidence& e) {
    return e.backend == backend && e.applicable;
  });
}

// "fast-avx2 ran 6 of 35 claims (C09, C10, …)": one line per kernel backend.
std::string kernel_coverage(const std::vector<ClaimBackend>& backends,
                            const std::vector<std::pair<std::string, ClaimEvidence>>& results) {
  std::string out;
  for (const ClaimBackend& b : backends) {
    if (!b.kernel) continue;
    std::string ids;
    int n = 0;
    for (const auto& [id, ev] : results) {
      if (!ran_on(ev, b.name)) continue;
      ids += (ids.empty() ? "" : ", ") + id;
      ++n;
    }
    out += b.name + " ran " + std::to_string(n) + " of " + std::to_string(results.size()) +
           " claim(s) on its kernels" + (ids.empty() ? "" : " (" + ids + ")") +
           "; the others are n/a there (no kernel for their ops, or reference only)\n";
  }
  return out;
}

void print_table_row(const Claim& c, const ClaimEvidence& ev, std::ostream& out) {
  out << c.id << "  " << claim_status_name(ev.status) << "  [" << claim_kind_name(c.kind)
      << ", " << ev.trials << " trials]  " << c.statement << "\n";
  out << "    source: " << c.source << "\n";
  for (const BackendEvidence& b : ev.backends) {
    out << "    " << b.backend << ": ";
    if (!b.applicable) {
      out << b.note << "\n";
      continue;
    }
    if (c.kind == ClaimKind::kCounterexample) {
      out << (b.ok ? "shown" : "FAILS") << "  relative gap " << sci(b.residual) << "  " << b.note
          << "\n";
      continue;
    }
    out << (b.ok ? "ok" : "FAILS") << "  max residual " << sci(b.residual)
        << "  worst residual/bound " << sci(b.ratio) << " (bound there " << sci(b.bound) << ")  ["
        << b.trials << " trials]";
    if (!b.note.empty()) out << "  " << b.note;
    out << "\n";
  }
  if (ev.counterexample) {
    const Counterexample& x = *ev.counterexample;
    out << "    counterexample: " << x.inputs << "\n";
    out << "      " << x.first_label << " = " << x.first << "\n";
    out << "      " << x.second_label << " = " << x.second << "\n";
  }
  if (!ev.summary.empty()) out << "    " << ev.summary << "\n";
  out << "    float bound: " << c.float_bound << "\n";
}

}  // namespace

std::string claim_ids() {
  std::string s;
  for (const Claim& c : claims_registry()) s += (s.empty() ? "" : ", ") + c.id;
  return s;
}

std::string claim_backend_names() {
  std::string s;
  bool fast = false;
  for (const ClaimBackend& b : claim_backends()) {
    s += (s.empty() ? "" : ", ") + b.name;
    fast = fast || b.name.rfind("fast-", 0) == 0;
  }
  return fast ? s + ", fast (every fast-<target>)" : s;
}

nlohmann::json claim_json(const Claim& c, const ClaimEvidence& ev) {
  nlohmann::json j;
  j["id"] = c.id;
  j["source"] = c.source;
  j["statement"] = c.statement;
  j["kind"] = claim_kind_name(c.kind);
  j["status"] = claim_status_name(ev.status);
  j["trials"] = ev.trials;
  j["float_bound"] = c.float_bound;
  j["summary"] = ev.summary;
  j["evidence"] = nlohmann::json::array();
  for (const BackendEvidence& b : ev.backends) {
    j["evidence"].push_back({{"backend", b.backend},
                             {"applicable", b.applicable},
                             {"trials", b.trials},
                             {"residual", b.residual},
                             {"bound", b.bound},
                             {"ratio", b.ratio},
                             {"ok", b.ok},
                             {"note", b.note}});
  }
  if (ev.counterexample) {
    const Counterexample& x = *ev.counterexample;
    j["counterexample"] = {{"inputs", x.inputs},
                           {"first", {{"label", x.first_label}, {"value", x.first}}},
                           {"second", {{"label", x.second_label}, {"value", x.second}}}};
  }
  return j;
}

int run_claims(const ClaimsOptions& o, std::ostream& out) {
  std::vector<const Claim*> selected;
  for (const Claim& c : claims_registry()) {
    if (o.id.empty() || c.id == o.id) selected.push_back(&c);
  }
  if (selected.empty()) {
    throw std::invalid_argument("--id: unknown claim '" + o.id + "', expected one of: " +
                                claim_ids());
  }
  ClaimContext ctx;
  ctx.seed = o.seed;
  if (o.backend.empty()) {
    ctx.backends = claim_backends();
  } else {
    ctx.backends = resolve_claim_backends(o.backend);
    if (ctx.backends.empty()) {
      throw std::invalid_argument("--backend: unknown backend '" + o.backend +
                                  "', expected one of: " + claim_backend_names());
    }
  }
  bool any_fail = false;
  nlohmann::json list = nlohmann::json::array();
  std::vector<std::pair<std::string, ClaimEvidence>> results;
  for (const Claim* c : selected) {
    const ClaimEvidence ev = evaluate(*c, ctx);
    any_fail = any_fail || ev.status == ClaimStatus::kFails;
    if (o.json) {
      list.push_back(claim_json(*c, ev));
    } else {
      print_table_row(*c, ev, out);
    }
    results.emplace_back(c->id, ev);
  }
  if (o.json) {
    out << list.dump(2) << "\n";
  } else {
    out << kernel_coverage(ctx.backends, results);
    out << selected.size() << " claim(s), " << (any_fail ? "some FAIL" : "none fails") << "\n";
  }
  return any_fail ? 1 : 0;
}

ClaimsSummary summarize_claims(uint64_t seed) {
  ClaimContext ctx;
  ctx.seed = seed;
  ctx.backends = claim_backends();
  ClaimsSummary s;
  for (const ClaimBackend& b : ctx.backends) s.backends.push_back(b.name);
  std::vector<std::pair<std::string, ClaimEvidence>> results;
  for (const Claim& c : claims_registry()) {
    const ClaimEvidence ev = evaluate(c, ctx);
    results.emplace_back(c.id, ev);
    ++s.total;
    switch (ev.status) {
      case ClaimStatus::kHolds:
        ++s.holds;
        break;
      case ClaimStatus::kRefutedAsStated:
        ++s.refuted;
        break;
      case ClaimStatus::kErratumShown:
        ++s.errata;
        break;
      case ClaimStatus::kFails:
        ++s.fails;
        s.failing.push_back(c.id + ": " + ev.summary);
        break;
    }
    s.json.push_back(claim_json(c, ev));
  }
  s.kernel_coverage = kernel_coverage(ctx.backends, results);
  return s;
}

std::string to_text(const ClaimsSummary& s) {
  std::string backends;
  for (const std::string& b : s.backends) backends += (backends.empty() ? "" : ", ") + b;
  std::string out = "claims: " + std::to_string(s.total) + " evaluated on " + backends + ": " +
                    std::to_string(s.holds) + " hold, " + std::to_string(s.refuted) +
                    " refuted as stated, " + std::to_string(s.errata) + " errata shown, " +
                    std::to_string(s.fails) + " FAIL (details: lmoracle claims)\n";
  std::istringstream coverage(s.kernel_coverage);
  for (std::string line; std::getline(coverage, line);) out += "  " + line + "\n";
  for (const std::string& f : s.failing) out += "  FAILS " + f + "\n";
  return out;
}

}  // namespace lmo::oracle
