// Whole-file writes that never leave a truncated file under the final name: golden files and
// their manifests are published by renaming a fully written, flushed temporary file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

namespace lmo::oracle {

// Writes `bytes` to a temporary file beside `path` (same folder, so the rename cannot cross
// file systems; the process id in its name keeps concurrent writers apart), flushes it to disk
// and renames it over `path`. An interruption leaves the old file or the new one, never a
// partial one. Throws InputError (file `path`, field "write") naming the failing step.
void write_file_atomically(const std::filesystem::path& path, std::span<const uint8_t> bytes);
// The same for a file made of pieces written one after the other (a golden file's tensors,
// gigabytes at real shapes, without copying them into one buffer first).
void write_file_atomically(const std::filesystem::path& path,
                           std::span<const std::span<const uint8_t>> pieces);
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

// The whole file; InputError (file `path`, field "read") when it cannot be read.
std::vector<uint8_t> read_file_bytes(const std::filesystem::path& path);

}  // namespace lmo::oracle
