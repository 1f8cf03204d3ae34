// Paged MLA decode ([workloads] item 1 for MLA): the op paged_mla_decode against truths outside
// its own code. The test gathers each sequence's latents and rotary keys from the pool with its
// own index arithmetic (FlashMLA's [pages, page_size, d_c + d_h^R]) and the dense mla_decode op
// on that cache must give the very same exact values; every kernel backend passes; kernels with
// paging bugs (the last partial page dropped, a page-table entry off by one on a sequence ending
// mid-page, the entry's latent and rotary parts swapped) are caught while the correct gather
// passes.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "fast/mla_decode.h"
#include "oracle/backends/backend.h"
#include "oracle/cases/case.h"
#include "oracle/check/check.h"
#include "oracle/verify/verify.h"
#include "tests/support/oracle_harness.h"

namespace lmo::oracle {
namespace {

constexpr int64_t kH = 4, kDh = 16, kDr = 16, kDc = 32, kPage = 8;

Case make_case(const nlohmann::json& params, const std::string& op = "paged_mla_decode") {
  return parse_case(
      {{"id", "paged-mla"}, {"op", op}, {"seed", 13}, {"formats", {"bf16"}}, {"params", params}},
      "paged_mla_test", "case");
}

nlohmann::json mla_params() { return {{"h", kH}, {"d_h", kDh}, {"d_rope", kDr}, {"d_c", kDc}}; }

nlohmann::json paged_params() {
  // Lengths ending mid-page, on a page boundary, a single token; spare pages in the pool.
  nlohmann::json p = mla_params();
  p["page_size"] = kPage;
  p["seq_lens"] = {11, 8, 1, 21};
  p["num_pages"] = 10;
  return p;
}

// Element offset of value e of token slot `slot` of page `page` (FlashMLA's layout).
int64_t pool_offset(int64_t page, int64_t slot, int64_t e) {
  return (page * kPage + slot) * (kDc + kDr) + e;
}

TEST(PagedMla, EqualsDenseMlaDecodeOnTheGatheredCache) {
  const Case c = make_case(paged_params());
  const InputSet in = reference_inputs(c, ref::Format::bf16);
  const Outputs<ref::mp> paged = make_op(c)->exact(in);
  const std::vector<int64_t> table = in.ints("page_table"), lens = in.ints("seq_lens");
  EXPECT_EQ(lens, (std::vector<int64_t>{11, 8, 1, 21}));
  const int64_t m = in.at("page_table").shape()[1], qc = kH * kDh, qr = kH * kDr, oc = kH * kDc;
  const ref::Tensor& pool = in.at("kv_pages");
  for (size_t b = 0; b < lens.size(); ++b) {
    const int64_t len = lens[b];
    nlohmann::json dp = mla_params();
    dp["cache_len"] = len;
    const Case dense = make_case(dp, "mla_decode");
    ref::Tensor q_c(ref::DType::bf16, {1, qc}), q_r(ref::DType::bf16, {1, qr}),
        c_kv(ref::DType::bf16, {len, kDc}), k_r(ref::DType::bf16, {len, kDr});
    for (int64_t i = 0; i < qc; ++i) q_c.set(i, in.at("q_c").get(static_cast<int64_t>(b) * qc + i));
    for (int64_t i = 0; i < qr; ++i) q_r.set(i, in.at("q_r").get(static_cast<int64_t>(b) * qr + i));
    for (int64_t t = 0; t < len; ++t) {
      const int64_t page = table[b * static_cast<size_t>(m) + static_cast<size_t>(t / kPage)];
      for (int64_t e = 0; e < kDc; ++e)
        c_kv.set(t * kDc + e, pool.get(pool_offset(page, t % kPage, e)));
      for (int64_t e = 0; e < kDr; ++e) {
        k_r.set(t * kDr + e, pool.get(pool_offset(page, t % kPage, kDc + e)));
      }
    }
    InputSet din;
    din.add("q_c", q_c);
    din.add("q_r", q_r);
    din.add("c_kv", c_kv);
    din.add("k_r", k_r);
    din.add("w_uk", in.at("w_uk"));
    const Outputs<ref::mp> want = make_op(dense)->exact(din);
    for (int64_t i = 0; i < oc; ++i) {
      ASSERT_EQ(paged[0].values[b * static_cast<size_t>(oc) + static_cast<size_t>(i)],
                want[0].values[static_cast<size_t>(i)])
          << "sequence " << b << " element " << i;
    }
  }
}

enum class Bug { kNone, kLastPageDropped, kTableOffByOne, kEntrySwapped };

// A paged MLA kernel: gathers each sequence's entries (2-byte patterns) and runs the fast
// library's dense MLA decode on them; `bug` plants one paging mistake.
ref::Tensor paged_kernel(const InputSet& in, Bug bug) {
  const std::vector<int64_t> table = in.ints("page_table"), lens = in.ints("seq_lens");
  const int64_t m = in.at("page_table").shape()[1], batch = static_cast<int64_t>(lens.size());
  const int64_t qc = kH * kDh, qr = kH * kDr, oc = kH * kDc;
  const auto* pool = in.at("kv_pages").bytes().data();
  ref::Tensor o(ref::DType::bf16, {batch, oc});
  for (int64_t b = 0; b < batch; ++b) {
    int64_t len = lens[static_cast<size_t>(b)];
    const bool mid_page = len % kPage != 0;
    if (bug == Bug::kLastPageDropped && mid_page && len > kPage) len = len / kPage * kPage;
    std::vector<uint8_t> c_kv(static_cast<size_t>(len * kDc * 2)), k_r(size_t(len * kDr * 2));
    for (int64_t t = 0; t < len; ++t) {
      int64_t j = t / kPage;
      const bool last_page = j == (lens[static_cast<size_t>(b)] - 1) / kPage;
      if (bug == Bug::kTableOffByOne && mid_page && last_page && j + 1 < m) ++j;
      const int64_t page = table[static_cast<size_t>(b * m + j)];
      const int64_t latent = bug == Bug::kEntrySwapped ? kDr : 0;
      const int64_t rope = bug == Bug::kEntrySwapped ? 0 : kDc;
      std::memcpy(c_kv.data() + t * kDc * 2, pool + pool_offset(page, t % kPage, latent) * 2,
                  size_t(kDc * 2));
      std::memcpy(k_r.data() + t * kDr * 2, pool + pool_offset(page, t % kPage, rope) * 2,
                  size_t(kDr * 2));
    }
    fast::MlaDecodeArgs a;
    a.heads = kH;
    a.head_dim = kDh;
    a.rope_dim = kDr;
    a.latent_dim = kDc;
    a.cache_len = len;
    a.rope.base = 10000;
    fast::mla_decode(fast::Storage::bf16, in.at("q_c").bytes().data() + b * qc * 2,
                     in.at("q_r").bytes().data() + b * qr * 2, c_kv.data(), k_r.data(),
                     in.at("w_uk").bytes().data(), o.bytes().data() + b * oc * 2, a);
  }
  return o;
}

TEST(PagedMla, KernelsPassAndPagingBugsFail) {
  const Case c = make_case(paged_params());
  const InputSet in = reference_inputs(c, ref::Format::bf16);
  const auto graded = [&](const ref::Tensor& o) {
    std::map<std::string, ref::Tensor> outs;
    outs.emplace("o", o);
    return check_outputs(c, outs);
  };
  const CheckReport right = graded(paged_kernel(in, Bug::kNone));
  EXPECT_TRUE(right.pass) << to_text(right);
  for (const Bug bug : {Bug::kLastPageDropped, Bug::kTableOffByOne, Bug::kEntrySwapped}) {
    EXPECT_FALSE(graded(paged_kernel(in, bug)).pass) << "bug " << static_cast<int>(bug);
  }
  // The backends' own adapters (fast targets; gpu with a device) pass, judged as verify does.
  testing::Harness h(c.source, ref::Format::bf16);
  EXPECT_GT(h.expect_kernel_backends_pass(), 0);
}

TEST(PagedMla, BadTablesAreRefused) {
  const Case c = make_case(paged_params());
  InputSet in = reference_inputs(c, ref::Format::bf16);
  ref::Tensor table = in.at("page_table");
  table.set(1, 10);  // sequence 0's second page: past the pool of 10
  InputSet bad;
  for (const auto& [name, t] : in.all()) bad.add(name, name == "page_table" ? table : t);
  try {
    (void)make_op(c)->exact(bad);
    FAIL() << "a page outside the pool was read";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("paged_mla_decode: page_table[0][1] is 10"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace lmo::oracle
