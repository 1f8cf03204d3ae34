// Test helper for the safetensors interoperability test: the C++ writer and reader on one side
// of a pipe, Python's safetensors package on the other.
//   safetensors_probe write FILE  stdin: {"tensors": {name: {"dtype": "bf16", "shape": [2],
//                                 "hex": "803f..."}}, "metadata": {...}}; writes FILE
//   safetensors_probe dump FILE   stdout: the same JSON for what the reader finds, each floating
//                                 tensor also with "values": the hex bits of each element as
//                                 an exact binary64 (ref::Tensor::get)
// Exit 2 with the message on stderr when the library throws SafetensorsError.
#include <bit>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "oracle/golden/safetensors.h"
#include "oracle/core/sha256.h"

namespace {

using lmo::oracle::SafetensorsContent;
using nlohmann::json;

std::vector<uint8_t> from_hex(const std::string& hex) {
  if (hex.size() % 2) throw std::invalid_argument("hex: odd length " + std::to_string(hex.size()));
  std::vector<uint8_t> out(hex.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  }
  return out;
}

int write(const char* path) {
  const json spec = json::parse(std::cin);
  SafetensorsContent c;
  for (const auto& [name, t] : spec.at("tensors").items()) {
    const auto dtype = lmo::ref::parse_dtype(t.at("dtype").get<std::string>());
    if (!dtype) throw std::invalid_argument("unknown dtype " + t.at("dtype").dump());
    lmo::ref::Tensor tensor(*dtype, t.at("shape").get<std::vector<int64_t>>());
    const std::vector<uint8_t> bytes = from_hex(t.at("hex").get<std::string>());
    if (bytes.size() != tensor.nbytes()) throw std::invalid_argument("hex size of " + name);
    std::copy(bytes.begin(), bytes.end(), tensor.bytes().begin());
    c.tensors.emplace(name, std::move(tensor));
  }
  if (spec.contains("metadata")) {
    c.metadata = spec["metadata"].get<std::map<std::string, std::string>>();
  }
  lmo::oracle::write_safetensors(path, c);
  return 0;
}

int dump(const char* path) {
  const SafetensorsContent c = lmo::oracle::read_safetensors(path);
  json out = {{"tensors", json::object()}, {"metadata", c.metadata}};
  for (const auto& [name, t] : c.tensors) {
    json j = {{"dtype", lmo::ref::dtype_name(t.dtype())},
              {"shape", t.shape()},
              {"hex", lmo::oracle::to_hex(t.bytes())}};
    if (lmo::ref::is_float(t.dtype())) {
      json values = json::array();
      for (int64_t i = 0; i < t.numel(); ++i) {
        char buf[20];
        std::snprintf(buf, sizeof buf, "%016llx",
                      static_cast<unsigned long long>(std::bit_cast<uint64_t>(t.get(i))));
        values.push_back(buf);
      }
      j["values"] = std::move(values);
    }
    out["tensors"][name] = std::move(j);
  }
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: safetensors_probe write|dump FILE\n";
    return 2;
  }
  const std::string cmd = argv[1];
  try {
    if (cmd == "write") return write(argv[2]);
    if (cmd == "dump") return dump(argv[2]);
  } catch (const lmo::oracle::SafetensorsError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  std::cerr << "safetensors_probe: unknown command '" << cmd << "'\n";
  return 2;
}
