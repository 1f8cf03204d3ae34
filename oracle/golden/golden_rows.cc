#include "oracle/golden/golden_rows.h"

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "oracle/cases/case_inputs.h"
#include "oracle/core/row_slice.h"
#include "oracle/golden/golden_content.h"

namespace lmo::oracle {
namespace {

using json = nlohmann::json;

// Rows [begin, end) of part index of count, over `rows` rows: balanced to within one row.
std::pair<int64_t, int64_t> part_rows(int64_t rows, const GoldenShard& part) {
  return {part.index * rows / part.count, (part.index + 1) * rows / part.count};
}

// The part's "rows" metadata, read back (InputError naming the file otherwise).
struct PartRows {
  int64_t index = 0, count = 0, begin = 0, end = 0, of = 0;
  std::set<std::string> row_inputs;
};

PartRows read_part_rows(const SafetensorsContent& p, const std::string& where) {
  const auto it = p.metadata.find("rows");
  if (it == p.metadata.end()) {
    throw InputError(where, "__metadata__.rows",
                     "expected a row part (lmoracle golden --blocks I/N), but it has no rows");
  }
  PartRows r;
  try {
    const json j = json::parse(it->second);
    r.index = j.at("index").get<int64_t>();
    r.count = j.at("count").get<int64_t>();
    r.begin = j.at("begin").get<int64_t>();
    r.end = j.at("end").get<int64_t>();
    r.of = j.at("of").get<int64_t>();
    for (const json& n : j.at("row_inputs")) r.row_inputs.insert(n.get<std::string>());
  } catch (const json::exception& e) {
    throw InputError(where, "__metadata__.rows",
                     std::string("expected {index, count, begin, end, of, row_inputs}: ") +
                         e.what());
  }
  return r;
}

// The parts' tensors under `key`, concatenated along their leading dimension.
ref::Tensor concat_rows(const std::vector<const ref::Tensor*>& ts, const std::string& key,
                        const std::vector<std::string>& where) {
  std::vector<int64_t> shape = ts.front()->shape();
  int64_t rows = 0;
  for (size_t i = 0; i < ts.size(); ++i) {
    std::vector<int64_t> s = ts[i]->shape();
    if (ts[i]->dtype() != ts.front()->dtype() || s.empty() ||
        !std::equal(s.begin() + 1, s.end(), shape.begin() + 1, shape.end())) {
      throw InputError(where[i], key, "expected the dtype and trailing shape of part 0's " + key);
    }
    rows += s[0];
  }
  shape[0] = rows;
  ref::Tensor whole(ts.front()->dtype(), shape);
  size_t at = 0;
  for (const ref::Tensor* t : ts) {
    std::copy(t->bytes().begin(), t->bytes().end(), whole.bytes().begin() + at);
    at += t->nbytes();
  }
  return whole;
}

}  // namespace

bool splits_for(const Case& c, const GoldenShard& part) {
  const std::unique_ptr<Op> op = make_op(c);
  return splits_into_rows(*op) && op->independent_rows() >= part.count;
}

std::string golden_rows_file_name(const std::string& case_id, const GoldenShard& part) {
  std::string name = golden_file_name(case_id);
  name.resize(name.size() - std::string(".safetensors").size());
  return name + ".rows-" + std::to_string(part.index) + "-of-" + std::to_string(part.count) +
         ".safetensors";
}

SafetensorsContent golden_rows_content(const Case& c, const GoldenShard& part) {
  const std::unique_ptr<Op> op = make_op(c);
  const int64_t rows = op->independent_rows();
  if (!splits_into_rows(*op)) {
    throw InputError(c.file, c.path + ".op",
                     "case " + c.id + ": op " + c.op +
                         " has no independent rows to split with --blocks (a top-k output, or an "
                         "output without them as its leading dimension); --shard spreads whole "
                         "cases");
  }
  if (part.count > rows) {
    throw InputError("command line", "--blocks",
                     "case " + c.id + " has " + std::to_string(rows) + " rows, fewer than " +
                         std::to_string(part.count) + " parts");
  }
  const auto [begin, end] = part_rows(rows, part);
  const ref::Format first = c.input_format.value_or(c.formats.front());
  const InputSet in = make_inputs(c, *op, first);
  const std::unique_ptr<Op> sub = op->with_rows(end - begin);
  SafetensorsContent out =
      golden_file_content(c, *sub, row_slice(*op, in, rows, begin, end), ref::format_name(first));
  json row_inputs = json::array();
  for (const auto& [name, t] : in.all()) {
    if (op->row_input(name)) row_inputs.push_back(name);
  }
  out.metadata["rows"] = json{{"index", part.index},   {"count", part.count}, {"begin", begin},
                              {"end", end},             {"of", rows},
                              {"row_inputs", row_inputs}}
                             .dump();
  return out;
}

SafetensorsContent join_row_parts(const std::vector<std::filesystem::path>& files) {
  if (files.empty()) throw std::logic_error("join_row_parts: no parts");
  // Each part's metadata and tensor names first (no tensor is built).
  std::vector<SafetensorsContent> parts(files.size());
  std::vector<std::set<std::string>> names(files.size());
  std::vector<std::string> where;
  for (size_t i = 0; i < files.size(); ++i) {
    where.push_back(files[i].string());
    parts[i] = read_safetensors(files[i], [&](const std::string& key) {
      names[i].insert(key);
      return false;
    });
  }
  // In row order, each part once, with the same metadata but its rows.
  std::vector<size_t> order(parts.size());
  std::vector<PartRows> rows;
  for (size_t i = 0; i < parts.size(); ++i) rows.push_back(read_part_rows(parts[i], where[i]));
  const int64_t count = rows.front().count, of = rows.front().of;
  std::vector<int> seen(static_cast<size_t>(std::max<int64_t>(count, 0)), -1);
  for (size_t i = 0; i < parts.size(); ++i) {
    if (rows[i].count != count || rows[i].of != of || rows[i].index < 0 ||
        rows[i].index >= count || seen[static_cast<size_t>(rows[i].index)] >= 0) {
      throw InputError(where[i], "__metadata__.rows",
                       "expected part I of " + std::to_string(count) + " over " +
                           std::to_string(of) + " rows, each part once");
    }
    seen[static_cast<size_t>(rows[i].index)] = static_cast<int>(i);
  }
  for (int64_t k = 0; k < count; ++k) {
    if (seen[static_cast<size_t>(k)] < 0) {
      throw InputError(where.front(), "__metadata__.rows",
                       "part " + std::to_string(k) + " of " + std::to_string(count) +
                           " is missing");
    }
    order[static_cast<size_t>(k)] = static_cast<size_t>(seen[static_cast<size_t>(k)]);
  }
  const size_t first = order.front();
  SafetensorsContent whole;
  whole.metadata = parts[first].metadata;
  whole.metadata.erase("rows");
  int64_t next = 0;
  std::vector<std::string> in_order;
  for (const size_t i : order) {
    if (rows[i].begin != next || rows[i].end < rows[i].begin) {
      throw InputError(where[i], "__metadata__.rows",
                       "expected rows from " + std::to_string(next) + ", got [" +
                           std::to_string(rows[i].begin) + ", " + std::to_string(rows[i].end) +
                           ")");
    }
    next = rows[i].end;
    std::map<std::string, std::string> meta = parts[i].metadata;
    meta.erase("rows");
    if (meta != whole.metadata || rows[i].row_inputs != rows[first].row_inputs) {
      throw InputError(where[i], "__metadata__",
                       "expected the metadata of part 0 (another case, version or split?)");
    }
    if (names[i] != names[first]) {
      throw InputError(where[i], "tensors", "expected the tensor names of part 0");
    }
    in_order.push_back(where[i]);
  }
  if (next != of) {
    throw InputError(where.front(), "__metadata__.rows",
                     "the parts end at row " + std::to_string(next) + " of " + std::to_string(of));
  }
  // One tensor at a time: its rows concatenated in part order, or a whole input checked equal.
  for (const std::string& key : names[first]) {
    std::vector<ref::Tensor> ts;
    for (const size_t i : order) {
      SafetensorsContent one =
          read_safetensors(files[i], [&](const std::string& k) { return k == key; });
      ts.push_back(std::move(one.tensors.at(key)));
    }
    const bool sliced =
        key.starts_with("out.") ||
        (key.starts_with("in.") && rows[first].row_inputs.count(key.substr(3)) > 0);
    if (sliced) {
      std::vector<const ref::Tensor*> ps;
      for (const ref::Tensor& t : ts) ps.push_back(&t);
      whole.tensors.emplace(key, concat_rows(ps, key, in_order));
      continue;
    }
    for (size_t k = 1; k < ts.size(); ++k) {
      if (ts[k] != ts.front()) throw InputError(in_order[k], key, "expected part 0's whole input");
    }
    whole.tensors.emplace(key, std::move(ts.front()));
  }
  return whole;
}

}  // namespace lmo::oracle
