// fp8 scaling's arguments, shared by the kernel libraries (fast/fp8.h): the fp8 format, the
// tiling of a matrix into scale tiles (per tensor, token, 1×g group, g×g block), and their
// checks. The formula is reference/fp8_scaling.h's. Plain C++17.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace lmo::kernels {

enum class Fp8Format : uint8_t { e4m3, e5m2 };

// A rows × cols row-major matrix whose tile_rows × tile_cols tiles (row-major over the tile
// grid, the last ones possibly partial) each share one f32 scale.
struct Fp8Tiling {
  int64_t rows = 0, cols = 0, tile_rows = 1, tile_cols = 1;

  int64_t tiles_down() const { return (rows + tile_rows - 1) / tile_rows; }
  int64_t tiles_across() const { return (cols + tile_cols - 1) / tile_cols; }
  int64_t scales() const { return tiles_down() * tiles_across(); }
};

namespace detail {

inline void check_fp8_format(const char* fn, Fp8Format f) {
  if (f != Fp8Format::e4m3 && f != Fp8Format::e5m2) {
    throw std::invalid_argument(std::string(fn) + ": fp8 format is " +
                                std::to_string(static_cast<int>(f)) + ", expected e4m3 or e5m2");
  }
}

inline void check_fp8_tiling(const char* fn, const Fp8Tiling& t) {
  const auto bad = [&](const char* name, int64_t v, const char* expect) {
    throw std::invalid_argument(std::string(fn) + ": " + name + " is " + std::to_string(v) +
                                ", expected " + expect);
  };
  if (t.rows < 0) bad("rows", t.rows, ">= 0");
  if (t.cols < 0) bad("cols", t.cols, ">= 0");
  if (t.tile_rows < 1) bad("tile_rows", t.tile_rows, ">= 1");
  if (t.tile_cols < 1) bad("tile_cols", t.tile_cols, ">= 1");
}

}  // namespace detail
}  // namespace lmo::kernels
