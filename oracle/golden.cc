#include "oracle/golden.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "oracle/case_inputs.h"
#include "oracle/golden_content.h"
#include "oracle/sha256.h"
#include "oracle/system_info.h"

namespace lmo::oracle {
namespace {

namespace fs = std::filesystem;

std::string file_sha256(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return to_hex(sha256(std::string_view(ss.str())));
}

std::string case_sha256(const Case& c) {
  return to_hex(sha256(std::string_view(c.source.dump() + "\n" + version())));
}

fs::path manifest_path(const fs::path& dir, const GoldenShard* shard) {
  if (!shard || shard->count == 1) return dir / "manifest.json";
  return dir / ("manifest-" + std::to_string(shard->index) + "-of-" +
                std::to_string(shard->count) + ".json");
}

// Written like the golden files: a temporary name in the same folder, then a rename.
void write_text_atomically(const fs::path& p, const std::string& text) {
  const fs::path tmp = p.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw InputError(p.string(), "", "cannot write the file (is the folder writable?)");
  }
  std::error_code ec;
  fs::rename(tmp, p, ec);
  if (ec) throw InputError(p.string(), "", "cannot rename the temporary file: " + ec.message());
}

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw InputError(p.string(), "", "cannot open the manifest");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(p.string(), "", std::string("expected a JSON manifest: ") + e.what());
  }
}

}  // namespace

GoldenShard parse_shard(const std::string& text) {
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
    throw InputError("command line", "--shard", "expected I/N with integers, got \"" + text + "\"");
  }
  if (s.count < 1 || s.count > 100000 || s.index < 0 || s.index >= s.count) {
    throw InputError("command line", "--shard",
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

SafetensorsContent golden_content(const Case& c) {
  const std::unique_ptr<Op> op = make_op(c);
  const ref::Format first = c.formats.front();
  const InputSet in = make_inputs(c, *op, first);
  SafetensorsContent out;
  for (const auto& [name, t] : in.all()) out.tensors.emplace("in." + name, t);
  const std::vector<OutputDecl> decls = op->outputs();
  const Outputs<ref::mp> exact_first = op->exact(in);
  for (ref::Format f : c.formats) {
    bool same_inputs = true;
    const InputSet converted = convert_inputs(in, f, &same_inputs);
    const Outputs<ref::mp> other = same_inputs ? Outputs<ref::mp>{} : op->exact(converted);
    const Outputs<ref::mp>& exact = same_inputs ? exact_first : other;
    for (size_t k = 0; k < decls.size(); ++k) {
      const std::string key = "out." + decls[k].name + "." +
                              (decls[k].topk ? "i64" : std::string(ref::format_name(f)));
      out.tensors.emplace(key, rounded_output(decls[k], exact[k], f));
    }
  }
  nlohmann::json policies = nlohmann::json::object();
  for (size_t k = 0; k < decls.size(); ++k) {
    if (!decls[k].topk) {
      out.tensors.emplace("out." + decls[k].name + ".f64",
                          rounded_output(decls[k], exact_first[k], ref::Format::f64));
    }
    policies[decls[k].name] = policy_json(c.op, decls[k].name);
  }
  out.metadata["case"] = c.source.dump();
  out.metadata["input_format"] = std::string(ref::format_name(first));
  out.metadata["reference"] =
      "mp: MPFR with 50 decimal digits (166 bits); every output correctly rounded once";
  out.metadata["policy"] = policies.dump();
  out.metadata["version"] = version();
  return out;
}

nlohmann::json manifest_json(const std::vector<GoldenEntry>& entries, const GoldenShard* shard) {
  std::vector<GoldenEntry> sorted = entries;
  std::sort(sorted.begin(), sorted.end(),
            [](const GoldenEntry& a, const GoldenEntry& b) { return a.case_id < b.case_id; });
  nlohmann::json files = nlohmann::json::array();
  for (const GoldenEntry& e : sorted) {
    files.push_back(
        {{"case", e.case_id}, {"file", e.file}, {"sha256", e.sha256}, {"case_sha256", e.case_sha256}});
  }
  nlohmann::json j = {{"version", version()}, {"files", files}};
  if (shard && shard->count > 1) j["shard"] = {{"index", shard->index}, {"count", shard->count}};
  return j;
}

std::vector<GoldenEntry> write_golden(
    const std::vector<Case>& cases, const fs::path& dir, GoldenShard shard,
    const std::function<void(int64_t, int64_t, const std::string&)>& progress) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw InputError(dir.string(), "--out", "cannot create the output folder: " + ec.message());
  }
  // What a previous run left: case ID → (case hash, file hash).
  std::map<std::string, std::pair<std::string, std::string>> previous;
  const fs::path manifest = manifest_path(dir, &shard);
  if (fs::exists(manifest)) {
    const nlohmann::json m = read_json(manifest);
    if (m.contains("files") && m["files"].is_array()) {
      for (const auto& f : m["files"]) {
        if (f.contains("case") && f.contains("case_sha256") && f.contains("sha256")) {
          previous[f["case"].get<std::string>()] = {f["case_sha256"].get<std::string>(),
                                                    f["sha256"].get<std::string>()};
        }
      }
    }
  }
  const std::vector<Case> mine = shard_cases(cases, shard);
  std::vector<GoldenEntry> entries;
  for (size_t k = 0; k < mine.size(); ++k) {
    const Case& c = mine[k];
    if (progress) progress(static_cast<int64_t>(k), static_cast<int64_t>(mine.size()), c.id);
    GoldenEntry e;
    e.case_id = c.id;
    e.file = golden_file_name(c.id);
    e.case_sha256 = case_sha256(c);
    const fs::path path = dir / e.file;
    const auto it = previous.find(c.id);
    if (it != previous.end() && it->second.first == e.case_sha256 && fs::exists(path) &&
        file_sha256(path) == it->second.second) {
      e.sha256 = it->second.second;
      e.skipped = true;
    } else {
      const SafetensorsContent content = golden_content(c);
      // The writer is deterministic: these are the bytes write_safetensors puts in the file.
      const std::vector<uint8_t> bytes = write_safetensors_bytes(content, path.string());
      write_safetensors(path, content);
      e.sha256 = to_hex(sha256(std::span<const uint8_t>(bytes)));
    }
    entries.push_back(std::move(e));
  }
  write_text_atomically(manifest, manifest_json(entries, &shard).dump(2) + "\n");
  return entries;
}

int64_t merge_golden(const std::vector<fs::path>& dirs) {
  if (dirs.empty()) throw InputError("command line", "--merge", "expected at least one folder");
  std::vector<GoldenEntry> all;
  std::set<int64_t> seen_shards;
  int64_t count = -1;
  for (const fs::path& d : dirs) {
    for (const fs::directory_entry& f : fs::directory_iterator(d)) {
      const std::string name = f.path().filename().string();
      if (name.rfind("manifest-", 0) != 0 || f.path().extension() != ".json") continue;
      const nlohmann::json m = read_json(f.path());
      if (!m.contains("shard") || !m.contains("files")) {
        throw InputError(f.path().string(), "shard", "expected a shard manifest");
      }
      const int64_t n = m["shard"]["count"].get<int64_t>();
      const int64_t i = m["shard"]["index"].get<int64_t>();
      if (count >= 0 && n != count) {
        throw InputError(f.path().string(), "shard.count",
                         "expected " + std::to_string(count) + " shards like the others, got " +
                             std::to_string(n));
      }
      count = n;
      if (!seen_shards.insert(i).second) {
        throw InputError(f.path().string(), "shard.index",
                         "shard " + std::to_string(i) + " appears twice");
      }
      for (const auto& e : m["files"]) {
        GoldenEntry g;
        g.case_id = e["case"].get<std::string>();
        g.file = e["file"].get<std::string>();
        g.sha256 = e["sha256"].get<std::string>();
        g.case_sha256 = e["case_sha256"].get<std::string>();
        const fs::path src = d / g.file;
        if (!fs::exists(src) || file_sha256(src) != g.sha256) {
          throw InputError(src.string(), "sha256",
                           "the file is missing or does not match its manifest's hash");
        }
        if (d != dirs[0]) fs::copy_file(src, dirs[0] / g.file, fs::copy_options::overwrite_existing);
        all.push_back(std::move(g));
      }
    }
  }
  if (count < 0) throw InputError(dirs[0].string(), "", "no shard manifests (manifest-I-of-N.json)");
  if (static_cast<int64_t>(seen_shards.size()) != count) {
    throw InputError(dirs[0].string(), "shard",
                     "found " + std::to_string(seen_shards.size()) + " of " +
                         std::to_string(count) + " shard manifests");
  }
  write_text_atomically(dirs[0] / "manifest.json", manifest_json(all, nullptr).dump(2) + "\n");
  return static_cast<int64_t>(all.size());
}

}  // namespace lmo::oracle
