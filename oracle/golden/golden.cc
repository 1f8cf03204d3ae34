#include "oracle/golden/golden.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <map>
#include <set>

#include "oracle/core/atomic_file.h"
#include "oracle/cases/case_inputs.h"
#include "oracle/core/sha256.h"
#include "oracle/core/version.h"
#include "oracle/golden/golden_content.h"
#include "oracle/golden/golden_rows.h"

namespace lmo::oracle {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string file_sha256(const fs::path& p) { return sha256_hex(read_file_bytes(p)); }

std::string case_sha256(const Case& c, GoldenKind kind) {
  const std::string what = kind == GoldenKind::kInputsOnly ? "\ninputs only" : "";
  return to_hex(sha256(std::string_view(c.source.dump() + "\n" + version() + what)));
}

fs::path manifest_path(const fs::path& dir, const GoldenShard* shard) {
  if (!shard || (shard->count == 1 && !shard->rows)) return dir / "manifest.json";
  return dir / ("manifest-" + std::string(shard->rows ? "rows-" : "") +
                std::to_string(shard->index) + "-of-" + std::to_string(shard->count) + ".json");
}

void write_manifest(const fs::path& p, const std::vector<GoldenEntry>& entries,
                    const GoldenShard* shard) {
  write_file_atomically(p, manifest_json(entries, shard).dump(2) + "\n");
}

json read_json(const fs::path& p) {
  const std::vector<uint8_t> bytes = read_file_bytes(p);
  try {
    return json::parse(bytes.begin(), bytes.end());
  } catch (const json::exception& e) {
    throw InputError(p.string(), "", std::string("expected a JSON manifest: ") + e.what());
  }
}

// A string field of a manifest object; InputError naming the file and field otherwise.
std::string string_field(const json& o, const std::string& key, const fs::path& p,
                         const std::string& where) {
  if (!o.is_object() || !o.contains(key) || !o[key].is_string()) {
    throw InputError(p.string(), where + "." + key, "expected a string");
  }
  return o[key].get<std::string>();
}

int64_t int_field(const json& o, const std::string& key, const fs::path& p,
                  const std::string& where) {
  if (!o.is_object() || !o.contains(key) || !o[key].is_number_integer()) {
    throw InputError(p.string(), where + "." + key, "expected an integer");
  }
  return o[key].get<int64_t>();
}

// The entries of a manifest written by manifest_json.
std::vector<GoldenEntry> manifest_entries(const json& m, const fs::path& p) {
  if (!m.is_object() || !m.contains("files") || !m["files"].is_array()) {
    throw InputError(p.string(), "files", "expected the array of golden files");
  }
  std::vector<GoldenEntry> out;
  for (size_t i = 0; i < m["files"].size(); ++i) {
    const json& f = m["files"][i];
    const std::string where = "files[" + std::to_string(i) + "]";
    GoldenEntry e;
    e.case_id = string_field(f, "case", p, where);
    e.file = string_field(f, "file", p, where);
    e.sha256 = string_field(f, "sha256", p, where);
    e.case_sha256 = string_field(f, "case_sha256", p, where);
    // The file name follows from the case (and the part of its rows): never a path elsewhere.
    // A row part's manifest lists its part files, and part 0's the cases written whole.
    std::string expected = golden_file_name(e.case_id);
    if (m.contains("rows") && m["rows"].is_object()) {
      GoldenShard part{int_field(m["rows"], "index", p, "rows"),
                       int_field(m["rows"], "count", p, "rows"), true};
      if (part.index != 0 || e.file != expected) expected = golden_rows_file_name(e.case_id, part);
    }
    if (e.file != expected) {
      throw InputError(p.string(), where + ".file",
                       "expected \"" + expected + "\" for case " + e.case_id);
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

GoldenShard parse_shard(const std::string& text, const std::string& option) {
  const size_t slash = text.find('/');
  GoldenShard s;
  try {
    size_t used = 0;
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    s.index = std::stoll(text.substr(0, slash), &used);
    if (used != slash) throw std::invalid_argument("trailing");
    s.count = std::stoll(text.substr(slash + 1), &used);
    if (used != text.size() - slash - 1) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    throw InputError("command line", option, "expected I/N with integers, got \"" + text + "\"");
  }
  if (s.count < 1 || s.count > 100000 || s.index < 0 || s.index >= s.count) {
    throw InputError("command line", option,
                     "expected I/N with 0 <= I < N <= 100000, got \"" + text + "\"");
  }
  return s;
}

std::vector<Case> shard_cases(std::vector<Case> cases, GoldenShard shard) {
  std::sort(cases.begin(), cases.end(), [](const Case& a, const Case& b) { return a.id < b.id; });
  std::vector<Case> out;
  for (size_t k = 0; k < cases.size(); ++k) {
    if (static_cast<int64_t>(k % static_cast<size_t>(shard.count)) == shard.index) {
      out.push_back(std::move(cases[k]));
    }
  }
  return out;
}

std::string golden_file_name(const std::string& case_id) {
  std::string s = case_id;
  std::replace(s.begin(), s.end(), '/', '+');
  return s + ".safetensors";
}

SafetensorsContent golden_content(const Case& c, GoldenKind kind) {
  const std::unique_ptr<Op> op = make_op(c);
  const ref::Format first = c.input_format.value_or(c.formats.front());
  if (kind == GoldenKind::kInputsOnly) {
    return inputs_only_content(c, make_inputs(c, *op, first), ref::format_name(first));
  }
  return golden_file_content(c, *op, make_inputs(c, *op, first), ref::format_name(first));
}

json manifest_json(const std::vector<GoldenEntry>& entries, const GoldenShard* shard) {
  std::vector<GoldenEntry> sorted = entries;
  std::sort(sorted.begin(), sorted.end(),
            [](const GoldenEntry& a, const GoldenEntry& b) { return a.case_id < b.case_id; });
  json files = json::array();
  for (const GoldenEntry& e : sorted) {
    files.push_back({{"case", e.case_id},
                     {"file", e.file},
                     {"sha256", e.sha256},
                     {"case_sha256", e.case_sha256}});
  }
  json j = {{"version", version()}, {"files", files}};
  if (shard && (shard->count > 1 || shard->rows)) {
    j[shard->rows ? "rows" : "shard"] = {{"index", shard->index}, {"count", shard->count}};
  }
  return j;
}

std::vector<GoldenEntry> write_golden(
    const std::vector<Case>& cases, const fs::path& dir, GoldenShard shard,
    const std::function<void(int64_t, int64_t, const std::string&)>& progress, GoldenKind kind) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw InputError(
        dir.string(), "--out",
        "expected a folder that can be created: " + (ec ? ec.message() : "it is not a folder"));
  }
  // Row parts: every case, each its part of the rows; shards: a part of the cases.
  const std::vector<Case> mine = shard.rows ? cases : shard_cases(cases, shard);
  // What a previous (possibly interrupted) run recorded, for this run's cases: the manifest
  // lists exactly the files a run completed, each with its hash.
  std::map<std::string, GoldenEntry> state;
  const fs::path manifest = manifest_path(dir, &shard);
  if (fs::exists(manifest)) {
    std::set<std::string> ids;
    for (const Case& c : mine) ids.insert(c.id);
    for (GoldenEntry& e : manifest_entries(read_json(manifest), manifest)) {
      if (ids.count(e.case_id)) state[e.case_id] = std::move(e);
    }
  }
  const auto snapshot = [&] {
    std::vector<GoldenEntry> v;
    for (const auto& [id, e] : state) v.push_back(e);
    return v;
  };
  // The manifest is rewritten as files complete (at most once a second), so a run that is
  // interrupted resumes where it stopped instead of starting over.
  auto last_manifest = std::chrono::steady_clock::now();
  std::vector<GoldenEntry> entries;
  try {
    for (size_t k = 0; k < mine.size(); ++k) {
      const Case& c = mine[k];
      if (progress) progress(static_cast<int64_t>(k), static_cast<int64_t>(mine.size()), c.id);
      const bool parted = shard.rows && splits_for(c, shard);
      if (shard.rows && !parted && shard.index != 0) continue;  // part 0 writes it whole
      GoldenEntry e;
      e.case_id = c.id;
      e.file = parted ? golden_rows_file_name(c.id, shard) : golden_file_name(c.id);
      e.case_sha256 = case_sha256(c, kind);
      if (parted) {
        e.case_sha256 = to_hex(sha256(std::string_view(
            e.case_sha256 + "\nrows " + std::to_string(shard.index) + " of " +
            std::to_string(shard.count))));
      }
      const fs::path path = dir / e.file;
      const auto it = state.find(c.id);
      if (it != state.end() && it->second.case_sha256 == e.case_sha256 && fs::exists(path) &&
          file_sha256(path) == it->second.sha256) {
        e.sha256 = it->second.sha256;
        e.skipped = true;
      } else {
        // The writer is deterministic: these bytes are the file, and their hash is its hash.
        const SafetensorsContent content =
            parted ? golden_rows_content(c, shard) : golden_content(c, kind);
        const SafetensorsPieces file = safetensors_pieces(content, path.string());
        // Hashed while written, piece by piece (gigabytes at real shapes); the future's
        // destructor waits for the hash if the write throws.
        std::future<std::string> hash = std::async(std::launch::async, [&file] {
          Sha256 h;
          for (const std::span<const uint8_t> piece : file.pieces) h.update(piece);
          return to_hex(h.finish());
        });
        write_file_atomically(path, file.pieces);
        e.sha256 = hash.get();
        state[c.id] = e;
        if (std::chrono::steady_clock::now() - last_manifest > std::chrono::seconds(1)) {
          write_manifest(manifest, snapshot(), &shard);
          last_manifest = std::chrono::steady_clock::now();
        }
      }
      entries.push_back(std::move(e));
    }
  } catch (...) {
    // A failing case (or an interruption raised as an exception) keeps what was done.
    write_manifest(manifest, snapshot(), &shard);
    throw;
  }
  write_manifest(manifest, entries, &shard);
  return entries;
}

namespace {

// merge_golden of row parts: each case's parts, from the row manifests in dirs (all N parts of
// one split, each once, each file's hash checked), joined into dirs[0]/<case>.safetensors, and
// dirs[0]/manifest.json: the files and manifest of a single run, byte for byte.
int64_t merge_golden_rows(const std::vector<fs::path>& dirs) {
  std::map<std::string, std::vector<fs::path>> parts;  // case ID -> its part files
  std::vector<GoldenEntry> all;
  std::set<int64_t> seen;
  int64_t count = -1;
  for (const fs::path& d : dirs) {
    std::vector<fs::path> manifests;
    for (const fs::directory_entry& f : fs::directory_iterator(d)) {
      const std::string name = f.path().filename().string();
      if (name.rfind("manifest-", 0) != 0 || f.path().extension() != ".json") continue;
      if (name.rfind("manifest-rows-", 0) != 0) {
        throw InputError(f.path().string(), "--merge",
                         "expected row parts only (manifest-rows-I-of-N.json): a case shard "
                         "(--shard) and row parts (--blocks) cannot be merged together");
      }
      manifests.push_back(f.path());
    }
    std::sort(manifests.begin(), manifests.end());
    for (const fs::path& p : manifests) {
      const json m = read_json(p);
      if (!m.is_object() || !m.contains("rows") || !m["rows"].is_object()) {
        throw InputError(p.string(), "rows", "expected a row-part manifest (golden --blocks)");
      }
      const int64_t n = int_field(m["rows"], "count", p, "rows");
      const int64_t i = int_field(m["rows"], "index", p, "rows");
      const std::string v = string_field(m, "version", p, "");
      if (v != version()) {
        throw InputError(p.string(), "version",
                         std::string("expected the version of this lmoracle, ") + version() +
                             ", got " + v + " (merge with the program that wrote the parts)");
      }
      if ((count >= 0 && n != count) || i < 0 || i >= n || !seen.insert(i).second) {
        throw InputError(p.string(), "rows.index",
                         "part " + std::to_string(i) + " of " + std::to_string(n) +
                             " is out of range, of another split, or appears twice");
      }
      count = n;
      for (const GoldenEntry& g : manifest_entries(m, p)) {
        const fs::path src = d / g.file;
        if (!fs::exists(src) || file_sha256(src) != g.sha256) {
          throw InputError(src.string(), "sha256",
                           "expected the file its manifest " + p.filename().string() +
                               " lists, with that hash; it is missing or differs");
        }
        if (g.file == golden_file_name(g.case_id)) {  // written whole by part 0
          if (!fs::equivalent(d, dirs[0])) {
            write_file_atomically(dirs[0] / g.file, read_file_bytes(src));
          }
          all.push_back(g);
          continue;
        }
        parts[g.case_id].push_back(src);
      }
    }
  }
  if (static_cast<int64_t>(seen.size()) != count) {
    throw InputError(dirs[0].string(), "--merge",
                     "expected all " + std::to_string(count) + " row-part manifests, found " +
                         std::to_string(seen.size()));
  }
  for (const auto& [id, files] : parts) {
    const SafetensorsContent whole = join_row_parts(files);
    const auto meta = whole.metadata.find("case");
    if (meta == whole.metadata.end()) {
      throw InputError(files.front().string(), "__metadata__.case", "expected the case JSON");
    }
    const Case c = parse_case(json::parse(meta->second), files.front().string(),
                              "__metadata__.case");
    GoldenEntry e;
    e.case_id = c.id;
    e.file = golden_file_name(c.id);
    e.case_sha256 = case_sha256(c, GoldenKind::kFull);
    if (c.id != id) {
      throw InputError(files.front().string(), "__metadata__.case",
                       "expected case " + id + ", got " + c.id);
    }
    const fs::path path = dirs[0] / e.file;
    write_file_atomically(path, safetensors_pieces(whole, path.string()).pieces);
    e.sha256 = file_sha256(path);
    all.push_back(std::move(e));
  }
  write_manifest(dirs[0] / "manifest.json", all, nullptr);
  return static_cast<int64_t>(all.size());
}

}  // namespace

int64_t merge_golden(const std::vector<fs::path>& dirs) {
  if (dirs.empty()) throw InputError("command line", "--merge", "expected at least one folder");
  for (const fs::path& d : dirs) {
    std::error_code ec;
    if (!fs::is_directory(d, ec)) throw InputError(d.string(), "--merge", "expected a folder");
    for (const fs::directory_entry& f : fs::directory_iterator(d)) {
      if (f.path().filename().string().rfind("manifest-rows-", 0) == 0) {
        return merge_golden_rows(dirs);
      }
    }
  }
  std::vector<GoldenEntry> all;
  std::set<std::string> ids;
  std::set<int64_t> seen_shards;
  int64_t count = -1;
  for (const fs::path& d : dirs) {
    std::error_code ec;
    if (!fs::is_directory(d, ec)) throw InputError(d.string(), "--merge", "expected a folder");
    // Directory order is unspecified; sort so messages and copies happen in a fixed order.
    std::vector<fs::path> manifests;
    for (const fs::directory_entry& f : fs::directory_iterator(d)) {
      const std::string name = f.path().filename().string();
      if (name.rfind("manifest-", 0) == 0 && f.path().extension() == ".json") {
        manifests.push_back(f.path());
      }
    }
    std::sort(manifests.begin(), manifests.end());
    for (const fs::path& p : manifests) {
      const json m = read_json(p);
      if (!m.is_object() || !m.contains("shard") || !m["shard"].is_object()) {
        throw InputError(p.string(), "shard",
                         "expected a shard manifest (lmoracle golden --shard)");
      }
      const int64_t n = int_field(m["shard"], "count", p, "shard");
      const int64_t i = int_field(m["shard"], "index", p, "shard");
      const std::string v = string_field(m, "version", p, "");
      if (count >= 0 && n != count) {
        throw InputError(p.string(), "shard.count",
                         "expected " + std::to_string(count) + " shards like the others, got " +
                             std::to_string(n));
      }
      if (v != version()) {  // the merged manifest states this program's version
        throw InputError(p.string(), "version",
                         std::string("expected the version of this lmoracle, ") + version() +
                             ", got " + v + " (merge with the program that wrote the shards)");
      }
      count = n;
      if (i < 0 || i >= n || !seen_shards.insert(i).second) {
        throw InputError(p.string(), "shard.index",
                         "shard " + std::to_string(i) + " of " + std::to_string(n) +
                             " is out of range or appears twice");
      }
      for (GoldenEntry& g : manifest_entries(m, p)) {
        if (!ids.insert(g.case_id).second) {
          throw InputError(p.string(), "files", "case " + g.case_id + " is in two shards");
        }
        const fs::path src = d / g.file;
        if (!fs::exists(src) || file_sha256(src) != g.sha256) {
          throw InputError(src.string(), "sha256",
                           "expected the file its manifest " + p.filename().string() +
                               " lists, with that hash; it is missing or differs");
        }
        if (!fs::equivalent(d, dirs[0]))
          write_file_atomically(dirs[0] / g.file, read_file_bytes(src));
        all.push_back(std::move(g));
      }
    }
  }
  if (count < 0) {
    throw InputError(dirs[0].string(), "--merge",
                     "expected shard manifests (manifest-I-of-N.json)");
  }
  if (static_cast<int64_t>(seen_shards.size()) != count) {
    std::string missing;
    for (int64_t i = 0; i < count; ++i) {
      if (!seen_shards.count(i)) missing += (missing.empty() ? "" : ", ") + std::to_string(i);
    }
    throw InputError(
        dirs[0].string(), "--merge",
        "expected all " + std::to_string(count) + " shard manifests; missing shard " + missing);
  }
  write_manifest(dirs[0] / "manifest.json", all, nullptr);
  return static_cast<int64_t>(all.size());
}

}  // namespace lmo::oracle
