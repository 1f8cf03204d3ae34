// `lmoracle bench` as a user runs it: the JSON rows carry what the issue asks (op, backend,
// format, size, bytes_per_s, ratio) with the bytes each kernel must move, and the same kernel's
// in-cache rate with the bound it implies; every memory-bound op is measured or named as not
// measured, and bad options are exit 2 naming the option. No timing is asserted: speed is
// reported, never tested.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>

#include "tests/support/run_cli.h"

namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

lmo::testdata::CliResult run_cli(const std::string& args) {
  return lmo::testdata::run_cli(LMO_BIN, args);
}

// The JSON rows of `bench --quick --json <args>`, which must exit 0 with `count` rows (else the
// test fails with the output).
nlohmann::json quick_rows(const std::string& args, size_t count) {
  const auto r = run_cli("bench --quick --json " + args);
  if (r.code != 0) throw std::runtime_error("exit " + std::to_string(r.code) + ": " + r.out);
  nlohmann::json rows = nlohmann::json::parse(r.out).at("rows");
  if (rows.size() != count) {
    throw std::runtime_error(std::to_string(rows.size()) + " rows, expected " +
                             std::to_string(count) + ": " + r.out);
  }
  return rows;
}

TEST(BenchCli, QuickJsonRowsCarryTheTrafficAndTheRatio) {
  const auto r = run_cli("bench --quick --json --format bf16 --format f32");
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  std::set<std::string> ops;
  for (const auto& row : j.at("rows")) {
    ops.insert(row.at("op").get<std::string>());
    EXPECT_TRUE(row.at("backend").get<std::string>().starts_with("fast-")) << row;
    const std::string f = row.at("format");
    EXPECT_TRUE(f == "bf16" || f == "f32") << row;
    // Memory-bound rows: bytes/s over memcpy; compute-bound rows (attention, its decode step and
    // MLA decode): FLOP/s over sgemm.
    const bool flops = row.contains("flops_per_s");
    const char* rate = flops ? "flops_per_s" : "bytes_per_s";
    const char* base = flops ? "sgemm_flops_per_s" : "memcpy_bytes_per_s";
    EXPECT_GT(row.at(rate).get<double>(), 0) << row;
    EXPECT_GT(row.at(base).get<double>(), 0) << row;
    EXPECT_NEAR(row.at("ratio").get<double>(),
                row.at(rate).get<double>() / row.at(base).get<double>(),
                1e-9 * row.at("ratio").get<double>());
    EXPECT_GT(row.at("size").get<int64_t>(), 0);
    if (flops) continue;
    // The in-cache rate of the same kernel, over the same memcpy, and the bound it implies.
    const double cache = row.at("cache_bytes_per_s"), cache_ratio = row.at("cache_ratio");
    EXPECT_TRUE(std::isfinite(cache) && cache > 0) << row;
    EXPECT_TRUE(std::isfinite(cache_ratio) && cache_ratio > 0) << row;
    EXPECT_NEAR(cache_ratio, cache / row.at("memcpy_bytes_per_s").get<double>(),
                1e-9 * cache_ratio);
    const std::string bound = row.at("bound");
    EXPECT_TRUE(bound == "compute" || bound == "memory") << row;
    EXPECT_EQ(bound == "compute", cache_ratio < 0.8) << row;
  }
  EXPECT_EQ(j.at("rows").size(), 2 * ops.size());
  for (const char* op :
       {"rmsnorm", "layernorm", "softmax", "cross_entropy", "rope", "rope_table", "swiglu_gate",
        "geglu_gate", "reglu_gate", "geglu_tanh_gate", "softcap", "softcap_wide", "sinusoidal_pe",
        "attention", "attention_decode", "mla_decode"}) {
    EXPECT_TRUE(ops.count(op)) << op;
  }
  // Ops of the list without a fast kernel would be named here; every one has one now.
  EXPECT_TRUE(j.at("not_measured").empty()) << j.at("not_measured");
}

TEST(BenchCli, BytesAreEachInputReadOnceAndEachOutputWrittenOnce) {
  const nlohmann::json rows = quick_rows("--format bf16 --filter 'softcap|glu'", 6);
  for (const auto& row : rows) {
    const int64_t n = row.at("size");
    EXPECT_EQ(n, int64_t{1} << 20);
    // bf16: 2 bytes an element; softcap reads z and writes y, a GLU gate reads two and writes one.
    const bool gate = row.at("op").get<std::string>().find("glu") != std::string::npos;
    const int64_t arrays = gate ? 3 : 2;
    EXPECT_EQ(row.at("bytes").get<int64_t>(), arrays * 2 * n) << row;
  }
}

// The in-cache size: the most whole rows whose traffic is at most 256 KiB, at least one row; each
// timed batch moves at least the large size's traffic and at least 16 MiB.
TEST(BenchCli, InCacheSizeIsTheMostWholeRowsWithin256KiB) {
  const nlohmann::json rows = quick_rows(
      "--format bf16 --filter '^(rmsnorm|layernorm|cross_entropy|softcap|"
      "geglu_gate|rope_table)$'",
      6);
  const int64_t limit = 256 * 1024;
  for (const auto& row : rows) {
    const std::string op = row.at("op");
    const int64_t n = row.at("cache_size"), bytes = row.at("cache_bytes");
    // bf16: 2 bytes an element. Expected sizes are worked out by hand from the traffic formulas.
    if (op == "rmsnorm") {  // a 4096-row x in and y out (16 KiB a row), gamma (8 KiB) once
      EXPECT_EQ(n, 15 * 4096) << row;  // 8 KiB + 15·16 KiB = 248 KiB; 16 rows are 264 KiB
      EXPECT_EQ(bytes, 8192 + 15 * 16384) << row;
    } else if (op == "layernorm") {  // gamma and beta: 16 KiB once
      EXPECT_EQ(n, 15 * 4096) << row;
      EXPECT_EQ(bytes, 16384 + 15 * 16384) << row;
    } else if (op == "cross_entropy") {  // one row of 128256 logits moves 501 KiB: still one row
      EXPECT_EQ(n, 128256) << row;
      // Logits in, gradient out, the i64 target in, loss and log Z out in the storage format.
      EXPECT_EQ(bytes, 2 * 2 * 128256 + 8 + 2 + 2) << row;
      EXPECT_GT(bytes, limit) << row;
    } else if (op == "softcap") {  // z in, y out: 4 bytes an element
      EXPECT_EQ(n, limit / 4) << row;
      EXPECT_EQ(bytes, limit) << row;
    } else if (op == "geglu_gate") {  // two in, one out: 6 bytes an element
      EXPECT_EQ(n, limit / 6) << row;
      EXPECT_EQ(bytes, 6 * (limit / 6)) << row;
    } else {  // rope_table: a token is 4096 values in and out plus a 128-float table row
      EXPECT_EQ(n, 15 * 4096) << row;  // 15 · 16896 = 247.5 KiB; 16 tokens are 264 KiB
      EXPECT_EQ(bytes, 15 * (2 * 2 * 4096 + 128 * 4)) << row;
    }
    const int64_t batch = std::max<int64_t>(row.at("bytes").get<int64_t>(), int64_t{16} << 20);
    const int64_t calls = row.at("cache_calls");
    EXPECT_GE(calls * bytes, batch) << row;
    EXPECT_LT((calls - 1) * bytes, batch) << row;
  }
}

// With N threads the in-cache size is the most whole rows within N · 256 KiB, so that every
// thread has rows to split (each core has an L2 of its own).
TEST(BenchCli, InCacheSizeGrowsWithTheThreads) {
  const nlohmann::json rows =
      quick_rows("--threads 2 --format bf16 --filter '^(rmsnorm|softcap)$'", 2);
  const int64_t limit = 2 * 256 * 1024;
  for (const auto& row : rows) {
    const int64_t n = row.at("cache_size"), bytes = row.at("cache_bytes");
    if (row.at("op") == "rmsnorm") {  // gamma 8 KiB once, 16 KiB a row: 8 + 31·16 = 504 KiB
      EXPECT_EQ(n, 31 * 4096) << row;
      EXPECT_EQ(bytes, 8192 + 31 * 16384) << row;
    } else {  // softcap: z in, y out, 4 bytes an element
      EXPECT_EQ(n, limit / 4) << row;
      EXPECT_EQ(bytes, limit) << row;
    }
  }
}

TEST(BenchCli, AttentionFlopsAreTheVisiblePairsOperations) {
  const nlohmann::json rows = quick_rows("--format f32 --filter '^attention$'", 1);
  const auto& row = rows[0];
  // --quick: 256 tokens, causal: 256·257/2 visible pairs per head; 8 heads of d 128, 4d each.
  EXPECT_EQ(row.at("size").get<int64_t>(), 256 * 257 / 2) << row;
  EXPECT_EQ(row.at("flops").get<double>(), 4.0 * 128 * 8 * (256 * 257 / 2)) << row;
  EXPECT_EQ(row.at("sgemm_shape").get<std::string>(), "256x256x128") << row;
}

// The decode steps over a cache of 16 times --quick's 256 tokens: Llama 3 70B's 64 query heads on
// 8 KV heads, 4d per cached key and query head, against one KV group's Q Kᵀ; DeepSeek-V2's MLA
// (128 heads, d_h 128, d_h^R 64, d_c 512): the absorption 2·d_c·d_h per head, then per head and
// key q·k over d_c + d_h^R and p·v over d_c, against all heads' logits.
TEST(BenchCli, DecodeFlopsAreTheCachedKeysOperations) {
  const nlohmann::json rows = quick_rows("--format f32 --filter 'decode'", 2);
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("size").get<int64_t>(), 4096) << row;
    if (row.at("op") == "attention_decode") {
      EXPECT_EQ(row.at("flops").get<double>(), 4.0 * 128 * 64 * 4096) << row;
      EXPECT_EQ(row.at("sgemm_shape").get<std::string>(), "8x4096x128") << row;
    } else {
      EXPECT_EQ(row.at("op"), "mla_decode") << row;
      EXPECT_EQ(row.at("flops").get<double>(),
                128.0 * (2 * 512 * 128 + 4096.0 * 2 * (2 * 512 + 64)))
          << row;
      EXPECT_EQ(row.at("sgemm_shape").get<std::string>(), "128x4096x576") << row;
    }
  }
}

// The sinusoidal encoding is written, not read: its size and shape are the encoding's (1024 wide),
// its bytes the encoding written plus each token's i64 position read.
TEST(BenchCli, SinusoidalBytesAreTheEncodingWrittenAndThePositionsRead) {
  const nlohmann::json rows = quick_rows("--format bf16 --filter '^sinusoidal_pe$'", 1);
  const auto& row = rows[0];
  EXPECT_EQ(row.at("size").get<int64_t>(), int64_t{1} << 20) << row;
  EXPECT_EQ(row.at("shape").get<std::string>(), "1024x1024") << row;
  EXPECT_EQ(row.at("bytes").get<int64_t>(), 2 * (int64_t{1} << 20) + 1024 * 8) << row;
}

// RoPE on Llama 3.1 8B's 32 × 128 query heads: x in and y out, plus per token its i64 position
// (rope) or its f32 cos/sin table row of 128 values (rope_table).
TEST(BenchCli, RopeBytesCountPositionsOrTableRows) {
  const nlohmann::json rows = quick_rows("--format bf16 --filter '^rope'", 2);
  for (const auto& row : rows) {
    const int64_t n = row.at("size"), tokens = n / 4096;
    EXPECT_EQ(n, int64_t{1} << 20);
    const int64_t per_token = row.at("op") == "rope" ? 8 : 128 * 4;
    EXPECT_EQ(row.at("bytes").get<int64_t>(), 2 * 2 * n + tokens * per_token) << row;
  }
}

TEST(BenchCli, TableEndsWithHowToReadIt) {
  const auto r = run_cli("bench --quick --format f16 --filter softcap");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "memcpy GB/s")) << r.out;
  EXPECT_TRUE(contains(r.out, "softcap")) << r.out;
  EXPECT_TRUE(contains(r.out, "ratio: over a memcpy of the same bytes in this run")) << r.out;
  EXPECT_TRUE(contains(r.out, "cache GB/s")) << r.out;
  EXPECT_TRUE(contains(r.out, "bound: compute when c.ratio < 0.8")) << r.out;
}

TEST(BenchCli, BadOptionsAreExit2NamingTheOption) {
  struct Bad {
    const char* args;
    const char* names;
  };
  for (const Bad& b :
       {Bad{"bench --backend nope", "--backend"}, Bad{"bench --format e4m3", "--format"},
        Bad{"bench --threads 0", "--threads"}, Bad{"bench --size 1000000000000", "--size"},
        Bad{"bench --repetitions 0", "--repetitions"}, Bad{"bench --filter '('", "--filter"}}) {
    const auto r = run_cli(b.args);
    EXPECT_EQ(r.code, 2) << b.args << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, b.names)) << b.args << "\n" << r.out;
  }
}

// Without a device (or without CUDA) the gpu rows are refused, not measured; with one they are
// tools/gpu-check's business.
TEST(BenchCli, GpuWithoutADeviceIsExit2) {
  const auto list = run_cli("list --json");
  ASSERT_EQ(list.code, 0) << list.out;
  if (nlohmann::json::parse(list.out)["cuda"]["device"].get<bool>()) {
    GTEST_SKIP() << "a CUDA device is present: tools/gpu-check runs the GPU benchmarks";
  }
  const auto r = run_cli("bench --backend gpu --quick");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "--backend")) << r.out;
  EXPECT_TRUE(contains(r.out, "tools/gpu-check")) << r.out;
}

}  // namespace
