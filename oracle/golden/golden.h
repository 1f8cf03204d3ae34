// Golden files (DESIGN.md, Golden files): one safetensors file per case holding
//   in.<name>             the inputs, generated in the case's FIRST storage format (the very bits
//                         `verify` uses for that format); integer inputs in their own dtype;
//   out.<name>.<format>   for every storage format of the case: the exact outputs on in.<name>
//                         converted to that format (round-to-nearest-even; exact, hence the same
//                         inputs, whenever the format is at least as wide), correctly rounded
//                         once to it;
//   out.<name>.f64        the exact outputs on in.<name> rounded to f64, for users' own metrics;
//   out.<name>.i64        top-k expert indices instead (no format): the selection on in.<name>;
// and metadata: the case JSON, the input format, the reference precision, each output's
// tolerance policy with its constants, and the version. Files and manifests are byte-identical
// across runs, thread counts and machines.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "oracle/cases/case.h"
#include "oracle/golden/safetensors.h"

namespace lmo::oracle {

// A part of a golden run: shard I of N of the cases (--shard), or, with rows, part I of N of
// every case's rows (--blocks: golden_rows.h), whose files `merge_golden` joins into those a
// single run writes.
struct GoldenShard {
  int64_t index = 0;  // 0-based
  int64_t count = 1;
  bool rows = false;
};
// "I/N" with 0 ≤ I < N ≤ 100000 (InputError naming `option`, --shard or --blocks, otherwise).
GoldenShard parse_shard(const std::string& text, const std::string& option = "--shard");
// The cases of one shard: sorted by ID, case k goes to shard k mod N, so the N shards partition
// the list and each is balanced to within one case.
std::vector<Case> shard_cases(std::vector<Case> cases, GoldenShard shard);

// The file name of a case's golden file: its ID with '/' written as '+' (IDs never contain '+',
// so the mapping is one to one), then ".safetensors".
std::string golden_file_name(const std::string& case_id);

// What a golden file holds: the inputs and every output, or the inputs only (a challenge for a
// kernel: golden_content.h, inputs_only_content).
enum class GoldenKind { kFull, kInputsOnly };

// The whole content of one case's golden file.
SafetensorsContent golden_content(const Case& c, GoldenKind kind = GoldenKind::kFull);

struct GoldenEntry {
  std::string case_id;
  std::string file;         // relative to the output folder
  std::string sha256;       // of the file
  std::string case_sha256;  // of the canonical case JSON and the version: what the file is of
  bool skipped = false;     // a re-run found the file already up to date
};

// Writes the golden file of every case of the shard into dir (created if missing), each
// atomically (a temporary name, then a rename), skipping files whose manifest entry (case JSON
// and version) and SHA-256 already match; then the manifest: dir/manifest.json for an unsharded
// run, dir/manifest-<I>-of-<N>.json for a shard. The manifest is also rewritten while files
// complete, so an interrupted run resumes. progress(done, total, id) is called before each case.
// An inputs-only run (kind) records that in each entry's case_sha256, so that it never takes a
// full file for up to date, nor the reverse.
std::vector<GoldenEntry> write_golden(
    const std::vector<Case>& cases, const std::filesystem::path& dir, GoldenShard shard,
    const std::function<void(int64_t, int64_t, const std::string&)>& progress = {},
    GoldenKind kind = GoldenKind::kFull);

// Joins the shard manifests found in dirs (all N shards of one split, written by this version,
// each case in one shard only, each file's hash checked), copies shard files living in other
// folders into dirs[0] (atomically), and writes dirs[0]/manifest.json: byte-identical to the
// manifest of an unsharded run. Row parts (manifest-rows-I-of-N.json, --blocks) are joined into
// each case's file instead (golden_rows.h), byte for byte the file a single run writes. Returns
// the number of files. InputError names the manifest and field, or the file, that is wrong.
int64_t merge_golden(const std::vector<std::filesystem::path>& dirs);

// The manifest JSON (files sorted by case ID).
nlohmann::json manifest_json(const std::vector<GoldenEntry>& entries, const GoldenShard* shard);

}  // namespace lmo::oracle
