#include "reference/contraction.h"

namespace lmo::ref {
namespace {
thread_local bool t_contract = false;
}  // namespace

bool fma_contraction() { return t_contract; }

FmaContraction::FmaContraction(bool on) : previous_(t_contract) { t_contract = on; }

FmaContraction::~FmaContraction() { t_contract = previous_; }

}  // namespace lmo::ref
