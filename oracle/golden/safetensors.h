// Safetensors files (https://github.com/huggingface/safetensors, the LLM ecosystem's tensor
// format): the golden files' container. Layout: an 8-byte little-endian header length N, N bytes
// of UTF-8 JSON starting with '{' (trailing space padding allowed), then the data buffer. The
// JSON maps each tensor name to {"dtype", "shape", "data_offsets": [begin, end)} with offsets
// relative to the buffer start, plus an optional "__metadata__" object of string values.
//
// The reader enforces every rule of the format (see read_safetensors_bytes) and throws
// SafetensorsError naming the file, the tensor or field, and the rule broken. The writer is
// deterministic: identical tensors and metadata give byte-identical files on every run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "oracle/core/case_error.h"
#include "reference/tensor.h"

namespace lmo::oracle {

// A violated format rule, an unsupported dtype, or a file that cannot be read or written.
// what() is "<file>: <where>: <rule>", e.g.
//   "a.safetensors: tensor 'w' data_offsets: [0, 8) overlaps tensor 'v' [4, 12); ..."
// The command line maps it to exit code 2 (bad input).
class SafetensorsError : public InputError {
 public:
  SafetensorsError(std::string file, std::string where, std::string rule);
  const std::string& where() const { return field(); }  // "header", "tensor 'w' shape", ...
  const std::string& rule() const { return expectation(); }
};

// The format's header-size limit (the reference implementation's MAX_HEADER_SIZE).
inline constexpr uint64_t kSafetensorsMaxHeaderBytes = 100'000'000;

// Tensors by name (std::map: iteration in byte order of the names) and the string metadata.
struct SafetensorsContent {
  std::map<std::string, ref::Tensor> tensors;
  std::map<std::string, std::string> metadata;

  friend bool operator==(const SafetensorsContent&, const SafetensorsContent&) = default;
};

// The safetensors dtype string of a DType: F64 F32 F16 BF16 F8_E4M3 F8_E5M2 I64 I32 U8. tf32 is
// no safetensors dtype: its 32-bit word is a valid binary32 value, so it is stored as F32 (and
// reads back as f32 with the same bits).
std::string_view safetensors_dtype(ref::DType d);
// The DType of a supported safetensors dtype string, or nullopt.
std::optional<ref::DType> parse_safetensors_dtype(std::string_view name);

// Parses a whole file's bytes; a pure function of its input (no I/O), so it can be fuzzed.
// `name_for_messages` is the file name the error messages report. Rejects: a file shorter than
// 8 bytes or than its header length claims; a header longer than 100,000,000 bytes; a header
// that does not start with '{', is not UTF-8 or not JSON, or holds a duplicate key; a tensor
// entry that is not an object, misses or adds a key, has an unsupported dtype, a shape that is
// not an array of non-negative integers, or data_offsets that are not two non-negative integers
// with begin <= end; an element count or byte size that overflows 64 bits or differs from
// end - begin; tensors that overlap, leave gaps, or do not cover the data buffer exactly
// (including trailing bytes); a __metadata__ that is not an object of strings.
SafetensorsContent read_safetensors_bytes(std::span<const uint8_t> bytes,
                                          std::string_view name_for_messages);
// Reads and parses a file (errors name `path`).
SafetensorsContent read_safetensors(const std::filesystem::path& path);
// The same, building only the tensors whose names `keep` accepts (every entry is still
// checked). The file is mapped rather than read, so the others never enter memory: `check`
// grades against a golden file of several gigabytes, most of it outputs in formats the kernel
// did not write.
SafetensorsContent read_safetensors(const std::filesystem::path& path,
                                    const std::function<bool(const std::string&)>& keep);

// The canonical bytes of a file: header JSON with sorted keys and no whitespace, padded with
// spaces so that the data buffer starts at a multiple of 8; "__metadata__" only when metadata
// is non-empty. The data buffer holds the tensors by decreasing element size, then by name,
// so every tensor is aligned to its element size (PyTorch refuses to view a misaligned
// buffer). Throws SafetensorsError (file name `name_for_messages`) for a tensor named
// "__metadata__", a name or metadata string that is not valid UTF-8, or a header over the
// format's limit (no reader would accept the file).
std::vector<uint8_t> write_safetensors_bytes(const SafetensorsContent& content,
                                             std::string_view name_for_messages = "<memory>");
// The same bytes as pieces, in order: the length and header (held here), then each tensor's
// bytes where the content holds them (valid while it lives). golden writes and hashes a file
// of several gigabytes this way without a copy.
struct SafetensorsPieces {
  std::vector<uint8_t> header;
  std::vector<std::span<const uint8_t>> pieces;
};
SafetensorsPieces safetensors_pieces(const SafetensorsContent& content,
                                     std::string_view name_for_messages = "<memory>");
// Writes the canonical bytes with write_file_atomically (atomic_file.h: a temporary file in
// the same folder, flushed to disk, renamed over `path`): an interrupted write leaves either
// the old file or the new one, never a truncated file.
void write_safetensors(const std::filesystem::path& path, const SafetensorsContent& content);

}  // namespace lmo::oracle
