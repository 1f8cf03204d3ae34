// Safetensors reader and writer: round trips of every dtype and shape kind, a hand-computed
// file byte for byte, a file written by Python's safetensors 0.8.0, and one malformed file per
// rule of the format (built byte by byte) that must raise SafetensorsError naming the file,
// the tensor or field and the rule.
#include "oracle/golden/safetensors.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "oracle/core/utf8.h"
#include "tests/support/scratch_path.h"

namespace lmo::oracle {
namespace {

using ref::DType;
using ref::Tensor;
using Bytes = std::vector<uint8_t>;

constexpr DType kAllDTypes[] = {DType::f64,  DType::f32,  DType::tf32, DType::bf16, DType::f16,
                                DType::e4m3, DType::e5m2, DType::i64,  DType::i32,  DType::u8};

// A file from its parts: the length prefix (the header's own size unless `claimed` is given),
// the header text and the data buffer.
Bytes file_of(const std::string& header, const Bytes& data = {}, int64_t claimed = -1) {
  const uint64_t n = claimed < 0 ? header.size() : static_cast<uint64_t>(claimed);
  Bytes b;
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(n >> 8 * i));
  b.insert(b.end(), header.begin(), header.end());
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

// Varied bit patterns (a Weyl sequence: every byte position changes) including NaN, inf and
// subnormal patterns of the float formats.
Tensor patterned(DType d, std::vector<int64_t> shape, uint64_t salt) {
  Tensor t(d, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) {
    t.set_bits(i, (uint64_t(i) + 1) * 0x9E3779B97F4A7C15ull + salt * 0x632BE59BD9B4E019ull);
  }
  return t;
}

// Reading `bytes` must throw SafetensorsError whose message holds the file name and every
// one of `words`.
void expect_rejected(const Bytes& bytes, std::initializer_list<std::string> words) {
  try {
    read_safetensors_bytes(bytes, "bad.safetensors");
    ADD_FAILURE() << "accepted a malformed file; expected a message with '" << *words.begin()
                  << "'";
  } catch (const SafetensorsError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("bad.safetensors: ", 0), 0u) << msg;
    EXPECT_EQ(e.file(), "bad.safetensors");
    for (const std::string& w : words) EXPECT_NE(msg.find(w), std::string::npos) << msg;
  }
}

std::string entry(const std::string& dtype, const std::string& shape, const std::string& offsets) {
  return R"({"dtype":")" + dtype + R"(","shape":)" + shape + R"(,"data_offsets":)" + offsets + "}";
}

// ---------------------------------------------------------------- round trips and bytes

TEST(Safetensors, DTypeNamesAreTheFormatsOwn) {
  EXPECT_EQ(safetensors_dtype(DType::f64), "F64");
  EXPECT_EQ(safetensors_dtype(DType::f32), "F32");
  EXPECT_EQ(safetensors_dtype(DType::tf32), "F32");  // no TF32 in safetensors
  EXPECT_EQ(safetensors_dtype(DType::bf16), "BF16");
  EXPECT_EQ(safetensors_dtype(DType::f16), "F16");
  EXPECT_EQ(safetensors_dtype(DType::e4m3), "F8_E4M3");
  EXPECT_EQ(safetensors_dtype(DType::e5m2), "F8_E5M2");
  EXPECT_EQ(safetensors_dtype(DType::i64), "I64");
  EXPECT_EQ(safetensors_dtype(DType::i32), "I32");
  EXPECT_EQ(safetensors_dtype(DType::u8), "U8");
  EXPECT_EQ(parse_safetensors_dtype("F32"), DType::f32);
  EXPECT_EQ(parse_safetensors_dtype("F8_E4M3"), DType::e4m3);
  EXPECT_EQ(parse_safetensors_dtype("f32"), std::nullopt);  // names are case-sensitive
  EXPECT_EQ(parse_safetensors_dtype("BOOL"), std::nullopt);
}

TEST(Safetensors, EveryDTypeAndShapeRoundTripsBitForBit) {
  const std::vector<std::vector<int64_t>> shapes = {{}, {0}, {7}, {2, 3}, {3, 0, 2}, {1, 1, 5}};
  SafetensorsContent c;
  uint64_t salt = 0;
  for (DType d : kAllDTypes) {
    for (const auto& shape : shapes) {
      std::string name = std::string(ref::dtype_name(d)) + ".";
      for (int64_t e : shape) name += std::to_string(e) + "x";
      c.tensors.emplace(name, patterned(d, shape, ++salt));
    }
  }
  c.metadata = {{"case", R"({"op":"rmsnorm","seed":7})"}, {"unicode", "π ≈ 3.14 — ok"}, {"", ""}};
  const SafetensorsContent back = read_safetensors_bytes(write_safetensors_bytes(c), "rt");
  ASSERT_EQ(back.tensors.size(), c.tensors.size());
  EXPECT_EQ(back.metadata, c.metadata);
  for (const auto& [name, t] : c.tensors) {
    const Tensor& r = back.tensors.at(name);
    // tf32 is stored as F32 and comes back as f32 with the same 32-bit words.
    EXPECT_EQ(r.dtype(), t.dtype() == DType::tf32 ? DType::f32 : t.dtype()) << name;
    EXPECT_EQ(r.shape(), t.shape()) << name;
    EXPECT_TRUE(std::equal(r.bytes().begin(), r.bytes().end(), t.bytes().begin(), t.bytes().end()))
        << name;
  }
}

TEST(Safetensors, EmptyContentIsAnEightByteAlignedEmptyObject) {
  const Bytes b = write_safetensors_bytes({});
  EXPECT_EQ(b, file_of("{}      "));
  EXPECT_EQ(read_safetensors_bytes(b, "empty"), SafetensorsContent{});
}

// Worked by hand: F32 [1, -2] is 00 00 80 3F, 00 00 00 C0 and U8 scalar 7 is 07; the larger
// element goes first in the buffer. The header below is 130 bytes, padded with 6 spaces to
// 136 = 0x88, so the data starts at byte 144 = 18 * 8.
TEST(Safetensors, HandComputedFileIsReproducedByteForByte) {
  SafetensorsContent c;
  Tensor b(DType::f32, {2});
  b.set(0, 1.0);
  b.set(1, -2.0);
  Tensor a(DType::u8, {});
  a.set(0, 7);
  c.tensors.emplace("b", b);
  c.tensors.emplace("a", a);
  c.metadata["k"] = "v";
  const std::string header =
      R"({"__metadata__":{"k":"v"},"a":{"data_offsets":[8,9],"dtype":"U8","shape":[]},)"
      R"("b":{"data_offsets":[0,8],"dtype":"F32","shape":[2]}})";
  ASSERT_EQ(header.size(), 130u);
  const std::string text = std::string("\x88\0\0\0\0\0\0\0", 8) + header + "      " +
                           std::string("\0\0\x80\x3F\0\0\0\xC0\x07", 9);
  const Bytes expected(text.begin(), text.end());
  ASSERT_EQ(expected.size(), 153u);
  EXPECT_EQ(write_safetensors_bytes(c), expected);
  EXPECT_EQ(read_safetensors_bytes(expected, "hand"), c);
}

// Bytes written by Python's safetensors 0.8.0 (safetensors.numpy.save): its header lists
// __metadata__ first and the tensors in buffer order, which is not the writer's canonical form.
TEST(Safetensors, ReadsAFileWrittenByPythonSafetensors) {
  const std::string header =
      R"({"__metadata__":{"k":"v"},"s":{"dtype":"F64","shape":[],"data_offsets":[0,8]},)"
      R"("b":{"dtype":"F32","shape":[2,0],"data_offsets":[8,8]},)"
      R"("c":{"dtype":"U8","shape":[3],"data_offsets":[8,11]}})"
      "      ";
  const Bytes file = file_of(header, {0, 0, 0, 0, 0, 0, 0xF8, 0x3F, 0, 0, 0});
  ASSERT_EQ(file[0], 0xC0);  // the length prefix Python wrote
  const SafetensorsContent c = read_safetensors_bytes(file, "python");
  EXPECT_EQ(c.metadata, (std::map<std::string, std::string>{{"k", "v"}}));
  ASSERT_EQ(c.tensors.size(), 3u);
  EXPECT_EQ(c.tensors.at("s").get(0), 1.5);
  EXPECT_EQ(c.tensors.at("s").shape(), std::vector<int64_t>{});
  EXPECT_EQ(c.tensors.at("b").shape(), (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(c.tensors.at("c").dtype(), DType::u8);
  EXPECT_EQ(c.tensors.at("c").numel(), 3);
}

TEST(Safetensors, HeaderIsPaddedAndEveryTensorAlignedToItsElementSize) {
  SafetensorsContent c;
  // Odd byte counts in every size class: without the size-ordered buffer some would misalign.
  for (DType d : kAllDTypes) c.tensors.emplace(ref::dtype_name(d), patterned(d, {3}, 1));
  c.tensors.emplace("z", patterned(DType::u8, {5}, 2));
  c.metadata["x"] = "abc";
  const Bytes b = write_safetensors_bytes(c);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | b[i];
  EXPECT_EQ(n % 8, 0u);
  const auto header = nlohmann::json::parse(b.begin() + 8, b.begin() + 8 + n);
  for (const auto& [name, e] : header.items()) {
    if (name == "__metadata__") continue;
    const uint64_t begin = e["data_offsets"][0];
    const size_t size = ref::dtype_size(*parse_safetensors_dtype(e["dtype"].get<std::string>()));
    EXPECT_EQ((8 + n + begin) % size, 0u) << name << " starts at file byte " << 8 + n + begin;
  }
}

TEST(Safetensors, ZeroSizeTensorsWithHugeExtentsAreValid) {
  const Bytes f = file_of(R"({"e":)" + entry("F64", "[0,4611686018427387904]", "[0,0]") + "}");
  const SafetensorsContent c = read_safetensors_bytes(f, "zero");
  EXPECT_EQ(c.tensors.at("e").numel(), 0);
  EXPECT_EQ(c.tensors.at("e").shape()[1], int64_t{1} << 62);
}

TEST(Safetensors, TrailingJsonWhitespaceInTheHeaderIsAccepted) {
  const Bytes f = file_of(R"({"t":)" + entry("U8", "[1]", "[0,1]") + "}   \n ", {9});
  EXPECT_EQ(read_safetensors_bytes(f, "ws").tensors.at("t").get(0), 9.0);
}

TEST(Safetensors, FileWriteIsAtomicDeterministicAndReadable) {
  const auto dir = testdata::scratch_path("lmo_safetensors_test");
  std::filesystem::create_directories(dir);
  const auto path = dir / "case.safetensors";
  SafetensorsContent c;
  c.tensors.emplace("out.y.bf16", patterned(DType::bf16, {4, 3}, 5));
  c.tensors.emplace("in.x", patterned(DType::f32, {4, 3}, 6));
  c.metadata["version"] = "0.1.0";
  write_safetensors(path, c);
  const auto read_all = [](const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return Bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  };
  const Bytes first = read_all(path);
  EXPECT_EQ(first, write_safetensors_bytes(c));
  EXPECT_EQ(read_safetensors(path), c);
  write_safetensors(path, c);  // over the existing file
  EXPECT_EQ(read_all(path), first);
  // Only the final file remains: the temporary was renamed, not left behind.
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);
  // A folder that does not exist: the error names the file and leaves nothing behind.
  EXPECT_THROW(write_safetensors(dir / "missing" / "x.safetensors", c), SafetensorsError);
  try {
    read_safetensors(dir / "absent.safetensors");
    ADD_FAILURE() << "read a missing file";
  } catch (const SafetensorsError& e) {
    EXPECT_NE(std::string(e.what()).find("absent.safetensors"), std::string::npos);
  }
}

// Reading a file mapped, only the tensors a filter keeps (check's golden file): exactly those,
// bit for bit, with the metadata; an empty file and every truncation are still rejected, a
// malformed entry even where the filter would drop it, and a missing file names itself.
TEST(Safetensors, AFilteredReadBuildsOnlyTheKeptTensorsAndChecksEveryEntry) {
  const auto dir = testdata::scratch_path("lmo_safetensors_keep");
  std::filesystem::create_directories(dir);
  const auto path = dir / "golden.safetensors";
  SafetensorsContent c;
  c.tensors.emplace("in.x", patterned(DType::bf16, {4, 3}, 7));
  c.tensors.emplace("out.y.bf16", patterned(DType::bf16, {4, 3}, 8));
  c.tensors.emplace("out.y.f64", patterned(DType::f64, {4, 3}, 9));
  c.metadata["case"] = "{}";
  write_safetensors(path, c);
  const auto no_f64 = [](const std::string& k) { return !k.ends_with(".f64"); };
  SafetensorsContent expected = c;
  expected.tensors.erase("out.y.f64");
  EXPECT_EQ(read_safetensors(path, no_f64), expected);
  EXPECT_EQ(read_safetensors(path, [](const std::string&) { return true; }), c);
  const Bytes full = write_safetensors_bytes(c);
  const auto write_bytes = [&](const Bytes& b) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  };
  for (size_t len : {size_t{0}, size_t{7}, full.size() / 2, full.size() - 1}) {
    write_bytes(Bytes(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(len)));
    EXPECT_THROW(read_safetensors(path, no_f64), SafetensorsError) << "length " << len;
  }
  // The dropped tensor's dtype made unknown ("F64" → "F65"): still an error.
  std::string text(full.begin(), full.end());
  const size_t at = text.find("\"F64\"");
  ASSERT_NE(at, std::string::npos);
  text[at + 3] = '5';
  write_bytes(Bytes(text.begin(), text.end()));
  EXPECT_THROW(read_safetensors(path, no_f64), SafetensorsError);
  try {
    read_safetensors(dir / "absent.safetensors", no_f64);
    ADD_FAILURE() << "read a missing file";
  } catch (const SafetensorsError& e) {
    EXPECT_NE(std::string(e.what()).find("absent.safetensors"), std::string::npos);
  }
}

// Every proper prefix of a valid file is rejected (never read out of bounds), and so is the
// file with one byte appended.
TEST(Safetensors, EveryTruncationAndAnAppendedByteAreRejected) {
  SafetensorsContent c;
  c.tensors.emplace("a", patterned(DType::f16, {3}, 1));
  c.tensors.emplace("b", patterned(DType::u8, {2}, 2));
  c.metadata["m"] = "n";
  const Bytes full = write_safetensors_bytes(c);
  for (size_t len = 0; len < full.size(); ++len) {
    const Bytes cut(full.begin(), full.begin() + len);
    EXPECT_THROW(read_safetensors_bytes(cut, "cut"), SafetensorsError) << "length " << len;
  }
  Bytes longer = full;
  longer.push_back(0);
  expect_rejected(longer, {"data buffer", "trailing bytes", "cover"});
}

// Corrupted files: every single-byte change and many random multi-byte changes of a valid file
// either still parse (then the content re-reads identically from its canonical bytes) or raise
// SafetensorsError; no other exception, crash or out-of-bounds read (ASan: debug-asan preset).
TEST(Safetensors, CorruptedFilesParseOrRaiseSafetensorsErrorOnly) {
  SafetensorsContent c;
  c.tensors.emplace("in.x", patterned(DType::bf16, {2, 3}, 1));
  c.tensors.emplace("out.y.f32", patterned(DType::f32, {3}, 2));
  c.tensors.emplace("idx", patterned(DType::i64, {1}, 3));
  c.metadata["case"] = R"({"id":"t"})";
  const Bytes full = write_safetensors_bytes(c);
  uint64_t state = 0x243F6A8885A308D3ull;  // xorshift64: a fixed, library-independent sequence
  const auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int64_t parsed = 0, rejected = 0;
  const auto attempt = [&](const Bytes& b) {
    try {
      const SafetensorsContent r = read_safetensors_bytes(b, "fuzz");
      EXPECT_EQ(read_safetensors_bytes(write_safetensors_bytes(r), "again"), r);
      ++parsed;
    } catch (const SafetensorsError&) {
      ++rejected;
    }
  };
  for (size_t i = 0; i < full.size(); ++i) {
    for (uint8_t v : {uint8_t(full[i] ^ 0x01), uint8_t(full[i] ^ 0x80), uint8_t(0), uint8_t('"'),
                      uint8_t('{'), uint8_t('9')}) {
      Bytes b = full;
      b[i] = v;
      attempt(b);
    }
  }
  for (int k = 0; k < 20000; ++k) {
    Bytes b = full;
    for (int m = 0, n = 1 + static_cast<int>(next() % 4); m < n; ++m) {
      b[next() % b.size()] = static_cast<uint8_t>(next());
    }
    attempt(b);
  }
  EXPECT_GT(parsed, 0);  // data bytes and some header bytes are free to change
  EXPECT_GT(rejected, 0);
}

// ---------------------------------------------------------------- one test per rule

TEST(SafetensorsRules, FileShorterThanTheLengthPrefix) {
  expect_rejected({0x02, 0, 0, 0, 0}, {"header length", "truncated", "5 bytes"});
}

TEST(SafetensorsRules, HeaderLengthBeyondTheFile) {
  expect_rejected(file_of("{}", {}, 40), {"header length", "truncated", "40", "2 bytes follow"});
}

TEST(SafetensorsRules, HeaderLongerThanOneHundredMegabytesClaimed) {
  expect_rejected(file_of("{}", {}, 100'000'001), {"header length", "100000001", "100000000"});
  expect_rejected(file_of("{}", {}, int64_t{1} << 62), {"exceeds the limit"});
  // At the limit itself only the missing bytes are wrong.
  expect_rejected(file_of("{}", {}, 100'000'000), {"truncated"});
}

TEST(SafetensorsRules, HeaderMustStartWithABrace) {
  expect_rejected(file_of(" {}"), {"header", "start with '{'", "byte 32"});
  expect_rejected(file_of("[]"), {"start with '{'"});
  expect_rejected(file_of(""), {"start with '{'", "empty header"});
}

TEST(SafetensorsRules, HeaderMustBeUtf8) {
  expect_rejected(file_of("{\"\xC3\x28\":{}}"), {"header", "UTF-8", "byte 2"});
  expect_rejected(file_of("{\"\xC0\xAF\":{}}"), {"UTF-8"});          // overlong '/'
  expect_rejected(file_of("{\"\xED\xA0\x80\":{}}"), {"UTF-8"});      // a UTF-16 surrogate
  expect_rejected(file_of("{\"\xF4\x90\x80\x80\":{}}"), {"UTF-8"});  // above U+10FFFF
}

TEST(SafetensorsRules, HeaderMustBeJson) {
  expect_rejected(file_of(R"({"a":)"), {"header", "not valid JSON"});
  expect_rejected(file_of(R"({} x)"), {"not valid JSON"});
  expect_rejected(file_of(R"({'a':1})"), {"not valid JSON"});
  expect_rejected(file_of(R"({"a\ud800":1})"), {"not valid JSON"});  // lone surrogate escape
}

TEST(SafetensorsRules, DuplicateTensorNames) {
  const std::string t = entry("U8", "[1]", "[0,1]");
  expect_rejected(file_of(R"({"w":)" + t + R"(,"w":)" + t + "}", {1}),
                  {"duplicate tensor name \"w\""});
  expect_rejected(file_of(R"({"__metadata__":{},"__metadata__":{}})"), {"duplicate"});
}

TEST(SafetensorsRules, DuplicateKeyInsideAnEntry) {
  expect_rejected(
      file_of(R"({"w":{"dtype":"U8","dtype":"U8","shape":[1],"data_offsets":[0,1]}})", {1}),
      {"duplicate key \"dtype\"", "\"w\""});
}

TEST(SafetensorsRules, UnknownOrMissingKeyInATensorEntry) {
  expect_rejected(
      file_of(R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"stride":[1]}})", {1}),
      {"tensor \"w\"", "unknown key \"stride\""});
  expect_rejected(file_of(R"({"w":{"dtype":"U8","shape":[1]}})"),
                  {"tensor \"w\"", "missing key \"data_offsets\""});
  expect_rejected(file_of(R"({"w":[1,2]})"), {"tensor \"w\"", "must be an object"});
}

TEST(SafetensorsRules, WrongDTypeString) {
  expect_rejected(file_of(R"({"w":)" + entry("F33", "[1]", "[0,4]") + "}", {0, 0, 0, 0}),
                  {"tensor \"w\" dtype", "unsupported dtype \"F33\"", "F8_E4M3"});
  expect_rejected(file_of(R"({"w":)" + entry("f32", "[1]", "[0,4]") + "}", {0, 0, 0, 0}),
                  {"unsupported dtype \"f32\""});
  expect_rejected(file_of(R"({"w":)" + entry("BOOL", "[1]", "[0,1]") + "}", {0}),
                  {"unsupported dtype \"BOOL\""});
  expect_rejected(file_of(R"({"w":{"dtype":4,"shape":[1],"data_offsets":[0,4]}})"),
                  {"tensor \"w\" dtype", "unsupported dtype 4"});
}

TEST(SafetensorsRules, ShapeMustBeAnArrayOfNonNegativeIntegers) {
  const Bytes four = {0, 0, 0, 0};
  expect_rejected(file_of(R"({"w":)" + entry("F32", "[-1]", "[0,4]") + "}", four),
                  {"tensor \"w\" shape", "shape[0] must be a non-negative integer, got -1"});
  expect_rejected(file_of(R"({"w":)" + entry("F32", "[1.0]", "[0,4]") + "}", four),
                  {"shape[0]", "got 1.0"});
  expect_rejected(file_of(R"({"w":)" + entry("F32", "[1,\"1\"]", "[0,4]") + "}", four),
                  {"shape[1]", "got \"1\""});
  expect_rejected(file_of(R"({"w":)" + entry("F32", "4", "[0,4]") + "}", four),
                  {"shape must be an array"});
  expect_rejected(file_of(R"({"w":)" + entry("F32", "[9223372036854775808]", "[0,4]") + "}", four),
                  {"shape[0]", "overflows int64"});
}

TEST(SafetensorsRules, DataOffsetsMustBeTwoOrderedNonNegativeIntegers) {
  expect_rejected(file_of(R"({"w":)" + entry("U8", "[1]", "[0]") + "}", {0}),
                  {"tensor \"w\" data_offsets", "two non-negative integers"});
  expect_rejected(file_of(R"({"w":)" + entry("U8", "[1]", "[-1,0]") + "}", {0}),
                  {"two non-negative integers"});
  expect_rejected(file_of(R"({"w":)" + entry("U8", "[1]", "[0,1.5]") + "}", {0}),
                  {"two non-negative integers"});
  expect_rejected(file_of(R"({"w":)" + entry("U8", "[0]", "[1,0]") + "}", {0}),
                  {"begin 1 is past end 0"});
}

TEST(SafetensorsRules, ShapeAndByteSizeMismatch) {
  expect_rejected(file_of(R"({"w":)" + entry("F32", "[2,3]", "[0,20]") + "}", Bytes(20)),
                  {"tensor \"w\" data_offsets", "size mismatch", "[2, 3]", "F32", "24 bytes",
                   "[0, 20)", "hold 20"});
  expect_rejected(file_of(R"({"w":)" + entry("BF16", "[]", "[0,1]") + "}", {0}),
                  {"size mismatch", "needs 2 bytes"});
}

TEST(SafetensorsRules, OverflowInTheShapeProduct) {
  expect_rejected(file_of(R"({"w":)" + entry("U8", "[4294967296,4294967296]", "[0,1]") + "}", {0}),
                  {"tensor \"w\" shape", "element count", "overflows 64 bits"});
  // 2^62 elements fit, 2^62 * 4 bytes do not.
  expect_rejected(file_of(R"({"w":)" + entry("F32", "[4611686018427387904]", "[0,1]") + "}", {0}),
                  {"byte size", "F32", "overflows 64 bits"});
  // 2^62 * 2 is exactly 2^63: past int64 although it fits in uint64.
  expect_rejected(file_of(R"({"w":)" + entry("U8", "[4611686018427387904,2]", "[0,1]") + "}", {0}),
                  {"element count", "overflows"});
}

TEST(SafetensorsRules, OverlappingOffsets) {
  expect_rejected(file_of(R"({"a":)" + entry("U8", "[4]", "[0,4]") + R"(,"b":)" +
                              entry("U8", "[4]", "[2,6]") + "}",
                          Bytes(6)),
                  {"tensor \"b\" data_offsets", "[2, 6) overlap tensor \"a\" [0, 4)"});
  // The same range twice.
  expect_rejected(file_of(R"({"a":)" + entry("U8", "[4]", "[0,4]") + R"(,"b":)" +
                              entry("U8", "[4]", "[0,4]") + "}",
                          Bytes(8)),
                  {"overlap"});
  // An empty tensor inside another tensor's bytes.
  expect_rejected(file_of(R"({"a":)" + entry("U8", "[4]", "[0,4]") + R"(,"e":)" +
                              entry("U8", "[0]", "[2,2]") + "}",
                          Bytes(4)),
                  {"overlap"});
}

TEST(SafetensorsRules, GapBetweenTensors) {
  expect_rejected(file_of(R"({"a":)" + entry("U8", "[2]", "[0,2]") + R"(,"b":)" +
                              entry("U8", "[2]", "[3,5]") + "}",
                          Bytes(5)),
                  {"tensor \"b\" data_offsets", "gap", "[2, 3)"});
  expect_rejected(file_of(R"({"b":)" + entry("U8", "[2]", "[1,3]") + "}", Bytes(3)),
                  {"gap", "[0, 1)"});
}

TEST(SafetensorsRules, OffsetsMustCoverTheBufferExactly) {
  expect_rejected(file_of(R"({"a":)" + entry("U8", "[2]", "[0,2]") + "}", Bytes(5)),
                  {"data buffer", "trailing bytes", "[0, 2)", "holds 5 bytes"});
  expect_rejected(file_of("{}", Bytes(1)), {"trailing bytes"});
  // Offsets past the end: the data buffer is shorter than the header claims.
  expect_rejected(file_of(R"({"a":)" + entry("U8", "[4]", "[0,4]") + "}", Bytes(3)),
                  {"tensor \"a\" data_offsets", "truncated", "(3 bytes)"});
}

TEST(SafetensorsRules, MetadataMustBeAnObjectOfStrings) {
  expect_rejected(file_of(R"({"__metadata__":{"k":1}})"),
                  {"__metadata__ \"k\"", "must be strings", "got 1"});
  expect_rejected(file_of(R"({"__metadata__":{"k":{"x":"y"}}})"),
                  {"must be strings", "got object"});
  expect_rejected(file_of(R"({"__metadata__":{"k":null}})"), {"must be strings", "got null"});
  expect_rejected(file_of(R"({"__metadata__":"text"})"), {"__metadata__", "must be an object"});
  expect_rejected(file_of(R"({"__metadata__":null})"), {"must be an object", "null"});
}

// A hostile header nesting arrays a million deep is parsed and rejected without recursion
// (no stack overflow), in the metadata and in a shape.
TEST(SafetensorsRules, DeeplyNestedValuesAreRejected) {
  const size_t depth = 1'000'000;
  const std::string nest = std::string(depth, '[') + std::string(depth, ']');
  expect_rejected(file_of(R"({"__metadata__":{"k":)" + nest + "}}"),
                  {"must be strings", "got array"});
  expect_rejected(file_of(R"({"w":)" + entry("U8", "[" + nest + "]", "[0,0]") + "}"),
                  {"shape[0]", "got array"});
}

// ---------------------------------------------------------------- writer input

TEST(SafetensorsWriter, RejectsTheReservedNameAndNonUtf8Text) {
  SafetensorsContent c;
  c.tensors.emplace("__metadata__", Tensor(DType::u8, {1}));
  EXPECT_THROW(write_safetensors_bytes(c), SafetensorsError);
  SafetensorsContent bad_name;
  bad_name.tensors.emplace("w\xFF", Tensor(DType::u8, {1}));
  try {
    write_safetensors_bytes(bad_name, "out.safetensors");
    ADD_FAILURE() << "wrote a non-UTF-8 name";
  } catch (const SafetensorsError& e) {
    EXPECT_NE(std::string(e.what()).find("out.safetensors: tensor"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("UTF-8"), std::string::npos);
  }
  SafetensorsContent bad_meta;
  bad_meta.metadata["k"] = "\xC0\x80";
  EXPECT_THROW(write_safetensors_bytes(bad_meta), SafetensorsError);
}

// Control characters and quotes in names are escaped in the header and read back intact.
TEST(SafetensorsWriter, NamesWithQuotesAndControlCharactersRoundTrip) {
  SafetensorsContent c;
  c.tensors.emplace(std::string("a\"b\\c\n\x01", 8), patterned(DType::i32, {2}, 3));
  c.metadata[std::string("t\tab")] = std::string("v\0w", 3);
  EXPECT_EQ(read_safetensors_bytes(write_safetensors_bytes(c), "esc"), c);
}

// ---------------------------------------------------------------- UTF-8 validation

TEST(Utf8, WellFormedSequencesAtTheRangeBoundaries) {
  for (const char* s :
       {"", "ascii", "\x7F", "\xC2\x80", "\xDF\xBF", "\xE0\xA0\x80", "\xED\x9F\xBF", "\xEE\x80\x80",
        "\xEF\xBF\xBF", "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF", "π ≈ 3.14 — 🙂"}) {
    EXPECT_EQ(first_invalid_utf8(s), std::nullopt) << s;
  }
}

TEST(Utf8, IllFormedSequencesReportTheirOffset) {
  EXPECT_EQ(first_invalid_utf8("ab\x80"), 2u);            // lone continuation byte
  EXPECT_EQ(first_invalid_utf8("\xC1\xBF"), 0u);          // overlong two-byte
  EXPECT_EQ(first_invalid_utf8("\xE0\x9F\xBF"), 0u);      // overlong three-byte
  EXPECT_EQ(first_invalid_utf8("\xF0\x8F\xBF\xBF"), 0u);  // overlong four-byte
  EXPECT_EQ(first_invalid_utf8("x\xED\xA0\x80"), 1u);     // surrogate U+D800
  EXPECT_EQ(first_invalid_utf8("\xF4\x90\x80\x80"), 0u);  // U+110000
  EXPECT_EQ(first_invalid_utf8("\xF5\x80\x80\x80"), 0u);  // invalid lead byte
  EXPECT_EQ(first_invalid_utf8("ok\xE2\x82"), 2u);        // truncated at the end
  EXPECT_EQ(first_invalid_utf8("\xE2\x28\xA1"), 0u);      // bad second byte
  EXPECT_EQ(first_invalid_utf8("\xF0\x90\x28\xBC"), 0u);  // bad third byte
  EXPECT_EQ(first_invalid_utf8("\xFF"), 0u);
}

}  // namespace
}  // namespace lmo::oracle
