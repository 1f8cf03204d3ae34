// The safetensors writer: one canonical byte form per content (sorted JSON keys, no
// whitespace, fixed padding, fixed buffer order), written atomically (atomic_file.h) so golden
// files are byte-identical across runs and never left truncated.
#include <algorithm>
#include <bit>
#include <nlohmann/json.hpp>
#include <tuple>

#include "oracle/core/atomic_file.h"
#include "oracle/golden/safetensors.h"
#include "oracle/core/utf8.h"

namespace lmo::oracle {
namespace {

static_assert(std::endian::native == std::endian::little,
              "ref::Tensor holds little-endian bytes, the safetensors byte order");

using nlohmann::json;

void check_text(std::string_view file, const std::string& where, std::string_view text) {
  if (auto bad = first_invalid_utf8(text)) {
    throw SafetensorsError(std::string(file), where,
                           "not valid UTF-8 (malformed sequence at byte " + std::to_string(*bad) +
                               "); the header is UTF-8 JSON");
  }
}

}  // namespace

SafetensorsPieces safetensors_pieces(const SafetensorsContent& content,
                                     std::string_view name_for_messages) {
  // Buffer order: larger elements first, then by name. The header is padded so the buffer
  // starts at a multiple of 8, hence every tensor starts at a multiple of its element size.
  std::vector<const std::pair<const std::string, ref::Tensor>*> order;
  for (const auto& entry : content.tensors) {
    if (entry.first == "__metadata__") {
      throw SafetensorsError(std::string(name_for_messages), "tensor \"__metadata__\"",
                             "the name __metadata__ is reserved for the metadata object");
    }
    check_text(name_for_messages, "tensor " + quote_for_message(entry.first) + " name", entry.first);
    order.push_back(&entry);
  }
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return ref::dtype_size(a->second.dtype()) > ref::dtype_size(b->second.dtype());
  });  // stable: names stay in the map's (sorted) order within one element size

  // nlohmann::json objects are std::maps: keys serialize in sorted byte order.
  json header = json::object();
  uint64_t offset = 0;
  for (const auto* entry : order) {
    const ref::Tensor& t = entry->second;
    header[entry->first] = {{"dtype", std::string(safetensors_dtype(t.dtype()))},
                            {"shape", t.shape()},
                            {"data_offsets", {offset, offset + t.nbytes()}}};
    offset += t.nbytes();
  }
  if (!content.metadata.empty()) {
    json meta = json::object();
    for (const auto& [key, value] : content.metadata) {
      check_text(name_for_messages, "__metadata__ key " + quote_for_message(key), key);
      check_text(name_for_messages, "__metadata__ " + quote_for_message(key) + " value", value);
      meta[key] = value;
    }
    header["__metadata__"] = std::move(meta);
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  if (text.size() > kSafetensorsMaxHeaderBytes) {  // no reader would accept the file
    throw SafetensorsError(std::string(name_for_messages), "header",
                           "the header would be " + std::to_string(text.size()) +
                               " bytes, over the format's limit of " +
                               std::to_string(kSafetensorsMaxHeaderBytes));
  }

  SafetensorsPieces out;
  out.header.reserve(8 + text.size());
  for (int i = 0; i < 8; ++i) {
    out.header.push_back(static_cast<uint8_t>(uint64_t{text.size()} >> 8 * i));
  }
  out.header.insert(out.header.end(), text.begin(), text.end());
  out.pieces.push_back(out.header);
  for (const auto* entry : order) out.pieces.push_back(entry->second.bytes());
  return out;
}

std::vector<uint8_t> write_safetensors_bytes(const SafetensorsContent& content,
                                             std::string_view name_for_messages) {
  const SafetensorsPieces p = safetensors_pieces(content, name_for_messages);
  std::vector<uint8_t> out;
  size_t size = 0;
  for (const std::span<const uint8_t> piece : p.pieces) size += piece.size();
  out.reserve(size);
  for (const std::span<const uint8_t> piece : p.pieces)
    out.insert(out.end(), piece.begin(), piece.end());
  return out;
}

void write_safetensors(const std::filesystem::path& path, const SafetensorsContent& content) {
  const std::vector<uint8_t> bytes = write_safetensors_bytes(content, path.string());
  try {
    write_file_atomically(path, bytes);
  } catch (const InputError& e) {
    throw SafetensorsError(e.file(), e.field(), e.expectation());
  }
}

}  // namespace lmo::oracle
