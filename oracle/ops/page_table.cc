#include "oracle/ops/page_table.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "oracle/ops/limits.h"

namespace lmo::oracle {

int64_t PagedCache::max_pages() const {
  int64_t m = 1;
  for (int64_t len : seq_lens) m = std::max(m, pages_of(len));
  return m;
}

int64_t PagedCache::used_pages() const {
  int64_t n = 0;
  for (int64_t len : seq_lens) n += pages_of(len);
  return n;
}

int64_t PagedCache::checked_length(const std::vector<int64_t>& lens, int64_t b) const {
  const int64_t len = lens.at(static_cast<size_t>(b)), most = max_pages() * page_size;
  if (len < 1 || len > most) {
    throw std::invalid_argument(op + ": seq_lens[" + std::to_string(b) + "] is " +
                                std::to_string(len) + ", expected 1 to " + std::to_string(most) +
                                " (page_table's pages)");
  }
  return len;
}

int64_t PagedCache::checked_page(const std::vector<int64_t>& page_table, int64_t b,
                                 int64_t t) const {
  const int64_t j = t / page_size;
  const int64_t page = page_table.at(static_cast<size_t>(b * max_pages() + j));
  if (page < 0 || page >= num_pages) {
    throw std::invalid_argument(op + ": page_table[" + std::to_string(b) + "][" +
                                std::to_string(j) + "] is " + std::to_string(page) +
                                ", expected a page below " + std::to_string(num_pages));
  }
  return page;
}

namespace {

// The pages of the batch in order (sequence 0's first page, …) are pool pages π(0), π(1), …,
// π(i) = (a·i + c) mod N with a coprime to N: distinct, scattered over the pool and not in
// order, so a kernel that assumes contiguous or ascending pages fails; deterministic, so golden
// files do not depend on anything but the parameters.
int64_t scattered_page(int64_t i, int64_t n) {
  int64_t a = n / 2 + 1;
  while (std::gcd(a, n) != 1) ++a;
  return (a * i + n / 3) % n;
}

// The pool's size at most 2^30 elements (each drawn, converted and gathered): larger is a typo,
// refused before anything is allocated.
constexpr int64_t kMaxPoolElements = int64_t{1} << 30;

}  // namespace

std::vector<InputDecl> PagedCache::table_inputs() const {
  const int64_t b = batch(), m = max_pages();
  InputDecl table("page_table", {b, m}, Dist::kUniformInt, 0, static_cast<double>(num_pages),
                  ref::DType::i64);
  table.bounded = true;
  table.computed = [p = *this](const InputSet&, ref::Tensor& t) {
    int64_t next = 0;
    for (int64_t s = 0; s < p.batch(); ++s) {
      const int64_t used = p.pages_of(p.seq_lens[static_cast<size_t>(s)]);
      for (int64_t j = 0; j < p.max_pages(); ++j) {
        t.set(s * p.max_pages() + j,
              j < used ? static_cast<double>(scattered_page(next++, p.num_pages)) : 0.0);
      }
    }
  };
  InputDecl lens("seq_lens", {b}, Dist::kUniformInt, 1, static_cast<double>(m * page_size + 1),
                 ref::DType::i64);
  lens.bounded = true;
  lens.computed = [p = *this](const InputSet&, ref::Tensor& t) {
    for (int64_t s = 0; s < p.batch(); ++s) {
      t.set(s, static_cast<double>(p.seq_lens[static_cast<size_t>(s)]));
    }
  };
  std::vector<InputDecl> v;
  v.push_back(std::move(table));
  v.push_back(std::move(lens));
  return v;
}

void PagedCache::read(ParamReader& r, int64_t token_elements) {
  page_size = r.integer("page_size", 1, 4096);
  seq_lens = r.integers("seq_lens", 1, kMaxRows);
  if (seq_lens.empty()) r.fail("seq_lens", "expected one length per sequence, at least one");
  const int64_t used = used_pages();
  // Two spare pages by default: pages no table names, which a correct kernel never reads.
  num_pages = r.integer("num_pages", used, kMaxRows, used + 2);
  int64_t elements = 0;
  if (__builtin_mul_overflow(num_pages, page_size * token_elements, &elements) ||
      elements > kMaxPoolElements) {
    r.fail("num_pages", "expected a pool of at most " + std::to_string(kMaxPoolElements) +
                            " elements (num_pages · page_size · the elements of a token)");
  }
}

}  // namespace lmo::oracle
