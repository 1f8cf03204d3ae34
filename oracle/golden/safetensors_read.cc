// The safetensors reader: every rule of the format is checked before a tensor is built, so a
// malformed or hostile file yields a SafetensorsError and never an out-of-bounds read or an
// allocation larger than the file.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "oracle/core/atomic_file.h"
#include "oracle/core/utf8.h"
#include "oracle/golden/safetensors.h"

namespace lmo::oracle {
namespace {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian and is copied as is into ref::Tensor");

using nlohmann::json;

// A found value for a message: scalars as JSON text (long strings cut), containers by their
// type only. Never dump a container: nlohmann's serializer recurses, and a hostile header can
// nest arrays a million deep.
std::string describe(const json& v) {
  if (v.is_structured()) return v.type_name();
  std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 80) text = text.substr(0, 76) + "...\"";
  return text;
}

std::string tensor_where(const std::string& name, std::string_view field = {}) {
  std::string w = "tensor " + quote_for_message(name);
  if (!field.empty()) w += " " + std::string(field);
  return w;
}

std::string shape_text(std::span<const int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string range_text(uint64_t begin, uint64_t end) {
  std::string s = "[";  // built by appending: GCC 12 warns falsely on "[" + std::string&&
  s += std::to_string(begin);
  s += ", ";
  s += std::to_string(end);
  return s += ")";
}

// A JSON value a non-negative integer field must hold; shows what was found otherwise.
std::optional<uint64_t> as_unsigned(const json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  return std::nullopt;
}

struct Entry {
  std::string name;
  ref::DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin, end;
};

class Reader {
 public:
  Reader(std::span<const uint8_t> bytes, std::string_view file) : bytes_(bytes), file_(file) {}

  SafetensorsContent read(const std::function<bool(const std::string&)>& keep = {}) {
    const json header = parse_header();
    std::vector<Entry> entries;
    SafetensorsContent out;
    for (const auto& [key, value] : header.items()) {
      if (key == "__metadata__") {
        out.metadata = parse_metadata(value);
      } else {
        entries.push_back(parse_entry(key, value));
      }
    }
    check_coverage(entries);
    for (const Entry& e : entries) {
      if (keep && !keep(e.name)) continue;
      ref::Tensor t(e.dtype, e.shape);
      if (t.nbytes() > 0) std::memcpy(t.bytes().data(), data_.data() + e.begin, t.nbytes());
      out.tensors.emplace(e.name, std::move(t));
    }
    return out;
  }

 private:
  [[noreturn]] void fail(std::string where, std::string rule) const {
    throw SafetensorsError(std::string(file_), std::move(where), std::move(rule));
  }

  json parse_header() {
    if (bytes_.size() < 8) {
      fail("header length", "file is truncated: " + std::to_string(bytes_.size()) +
                                " bytes, shorter than the 8-byte little-endian header length");
    }
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = n << 8 | bytes_[i];
    if (n > kSafetensorsMaxHeaderBytes) {
      fail("header length", "header length " + std::to_string(n) + " exceeds the limit of " +
                                std::to_string(kSafetensorsMaxHeaderBytes) + " bytes");
    }
    const uint64_t rest = bytes_.size() - 8;
    if (n > rest) {
      fail("header length", "file is truncated: header length " + std::to_string(n) +
                                " runs past the end of the file (" + std::to_string(rest) +
                                " bytes follow the length)");
    }
    const std::string_view text(reinterpret_cast<const char*>(bytes_.data() + 8), n);
    data_ = bytes_.subspan(8 + n);
    if (text.empty() || text.front() != '{') {
      fail("header", "header must start with '{' (the JSON object), found " +
                         (text.empty() ? std::string("an empty header")
                                       : "byte " + std::to_string(uint8_t(text.front()))));
    }
    if (auto bad = first_invalid_utf8(text)) {
      fail("header", "header is not valid UTF-8 (malformed sequence at header byte " +
                         std::to_string(*bad) + ")");
    }
    // nlohmann keeps the last of duplicate keys silently; the callback sees every key first.
    std::vector<std::set<std::string>> open_objects;
    std::string top_key, duplicate;
    auto on_event = [&](int, json::parse_event_t event, json& parsed) {
      switch (event) {
        case json::parse_event_t::object_start:
          open_objects.emplace_back();
          break;
        case json::parse_event_t::object_end:
          open_objects.pop_back();
          break;
        case json::parse_event_t::key: {
          const std::string& key = parsed.get_ref<const std::string&>();
          if (open_objects.size() == 1) top_key = key;
          if (!open_objects.back().insert(key).second && duplicate.empty()) {
            duplicate = open_objects.size() == 1
                            ? "duplicate tensor name " + quote_for_message(key)
                            : "duplicate key " + quote_for_message(key) + " in the entry " +
                                  quote_for_message(top_key);
          }
          break;
        }
        default:
          break;
      }
      return true;
    };
    json header;
    try {
      header = json::parse(text.begin(), text.end(), on_event);
    } catch (const json::exception& e) {
      fail("header", std::string("header is not valid JSON: ") + e.what());
    }
    if (!duplicate.empty()) fail("header", duplicate + " (keys must be unique)");
    return header;
  }

  std::map<std::string, std::string> parse_metadata(const json& v) const {
    if (!v.is_object()) {
      fail("__metadata__",
           std::string("__metadata__ must be an object of string values, got ") + v.type_name());
    }
    std::map<std::string, std::string> m;
    for (const auto& [key, value] : v.items()) {
      if (!value.is_string()) {
        fail("__metadata__ " + quote_for_message(key),
             "__metadata__ values must be strings, got " + describe(value));
      }
      m.emplace(key, value.get<std::string>());
    }
    return m;
  }

  Entry parse_entry(const std::string& name, const json& v) const {
    if (!v.is_object()) {
      fail(tensor_where(name), std::string("a tensor entry must be an object with dtype, shape "
                                           "and data_offsets, got ") +
                                   v.type_name());
    }
    for (const auto& [key, value] : v.items()) {
      if (key != "dtype" && key != "shape" && key != "data_offsets") {
        fail(tensor_where(name), "unknown key " + quote_for_message(key) +
                                     " in a tensor entry (allowed: dtype, shape, data_offsets)");
      }
    }
    for (const char* key : {"dtype", "shape", "data_offsets"}) {
      if (!v.contains(key)) fail(tensor_where(name), std::string("missing key \"") + key + "\"");
    }
    Entry e{name, ref::DType::f32, {}, 0, 0};

    const json& dt = v["dtype"];
    const auto dtype =
        dt.is_string() ? parse_safetensors_dtype(dt.get_ref<const std::string&>()) : std::nullopt;
    if (!dtype) {
      fail(tensor_where(name, "dtype"),
           "unsupported dtype " + describe(dt) +
               " (expected one of F64, F32, F16, BF16, F8_E4M3, F8_E5M2, I64, I32, U8)");
    }
    e.dtype = *dtype;

    const json& shape = v["shape"];
    if (!shape.is_array()) {
      fail(
          tensor_where(name, "shape"),
          std::string("shape must be an array of non-negative integers, got ") + shape.type_name());
    }
    for (size_t i = 0; i < shape.size(); ++i) {
      const auto extent = as_unsigned(shape[i]);
      if (!extent) {
        fail(tensor_where(name, "shape"), "shape[" + std::to_string(i) +
                                              "] must be a non-negative integer, got " +
                                              describe(shape[i]));
      }
      if (*extent > uint64_t(std::numeric_limits<int64_t>::max())) {
        fail(tensor_where(name, "shape"),
             "shape[" + std::to_string(i) + "] = " + std::to_string(*extent) + " overflows int64");
      }
      e.shape.push_back(static_cast<int64_t>(*extent));
    }

    const json& offsets = v["data_offsets"];
    const bool pair = offsets.is_array() && offsets.size() == 2;
    const auto begin = pair ? as_unsigned(offsets[0]) : std::nullopt;
    const auto end = pair ? as_unsigned(offsets[1]) : std::nullopt;
    if (!begin || !end) {
      fail(tensor_where(name, "data_offsets"),
           "data_offsets must be two non-negative integers [begin, end], got " + describe(offsets));
    }
    if (*begin > *end) {
      fail(tensor_where(name, "data_offsets"),
           "data_offsets begin " + std::to_string(*begin) + " is past end " + std::to_string(*end));
    }
    e.begin = *begin;
    e.end = *end;

    // Checked size arithmetic: element count, then bytes, each within int64.
    uint64_t count = 1;
    for (int64_t extent : e.shape) {
      if (__builtin_mul_overflow(count, uint64_t(extent), &count) ||
          count > uint64_t(std::numeric_limits<int64_t>::max())) {
        fail(tensor_where(name, "shape"),
             "element count of shape " + shape_text(e.shape) + " overflows 64 bits");
      }
    }
    uint64_t nbytes = 0;
    if (__builtin_mul_overflow(count, uint64_t(ref::dtype_size(e.dtype)), &nbytes) ||
        nbytes > uint64_t(std::numeric_limits<int64_t>::max())) {
      fail(tensor_where(name, "shape"), "byte size of shape " + shape_text(e.shape) + " of " +
                                            std::string(dt.get_ref<const std::string&>()) +
                                            " overflows 64 bits");
    }
    if (nbytes != e.end - e.begin) {
      fail(tensor_where(name, "data_offsets"),
           "size mismatch: shape " + shape_text(e.shape) + " of " +
               dt.get_ref<const std::string&>() + " needs " + std::to_string(nbytes) +
               " bytes but data_offsets " + range_text(e.begin, e.end) + " hold " +
               std::to_string(e.end - e.begin));
    }
    if (e.end > data_.size()) {
      fail(tensor_where(name, "data_offsets"),
           "file is truncated: data_offsets " + range_text(e.begin, e.end) +
               " run past the end of the data buffer (" + std::to_string(data_.size()) + " bytes)");
    }
    return e;
  }

  // The byte ranges, in order, must tile [0, buffer size) exactly: no overlap, no gap, no
  // trailing byte. Empty tensors occupy an empty range at a boundary.
  void check_coverage(std::vector<Entry>& entries) const {
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
      return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
    });
    uint64_t covered = 0;
    const Entry* previous = nullptr;
    for (const Entry& e : entries) {
      if (e.begin < covered) {
        fail(tensor_where(e.name, "data_offsets"),
             "data_offsets " + range_text(e.begin, e.end) + " overlap tensor " +
                 quote_for_message(previous->name) + " " +
                 range_text(previous->begin, previous->end) +
                 " (offsets must be contiguous and non-overlapping)");
      }
      if (e.begin > covered) {
        fail(tensor_where(e.name, "data_offsets"),
             "gap: data_offsets " + range_text(e.begin, e.end) + " leave bytes " +
                 range_text(covered, e.begin) +
                 " of the data buffer unused (offsets must be contiguous)");
      }
      covered = e.end;
      previous = &e;
    }
    if (covered != data_.size()) {
      fail("data buffer", "trailing bytes: the tensors cover " + range_text(0, covered) +
                              " but the data buffer holds " + std::to_string(data_.size()) +
                              " bytes (offsets must cover the buffer exactly)");
    }
  }

  std::span<const uint8_t> bytes_;
  std::span<const uint8_t> data_;
  std::string_view file_;
};

}  // namespace

SafetensorsContent read_safetensors_bytes(std::span<const uint8_t> bytes,
                                          std::string_view name_for_messages) {
  return Reader(bytes, name_for_messages).read();
}

SafetensorsContent read_safetensors(const std::filesystem::path& path) {
  std::vector<uint8_t> bytes;
  try {
    bytes = read_file_bytes(path);
  } catch (const InputError& e) {
    throw SafetensorsError(e.file(), "file", e.expectation());
  }
  return read_safetensors_bytes(bytes, path.string());
}

SafetensorsContent read_safetensors(const std::filesystem::path& path,
                                    const std::function<bool(const std::string&)>& keep) {
  const std::string name = path.string();
  const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw SafetensorsError(name, "file", "cannot open the file for reading");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw SafetensorsError(name, "file", "expected a regular file whose size can be read");
  }
  const auto size = static_cast<size_t>(st.st_size);
  void* map = nullptr;
  if (size > 0) {
    map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      ::close(fd);
      throw SafetensorsError(name, "file", "cannot map the file for reading");
    }
  }
  ::close(fd);
  struct Unmap {
    void* p;
    size_t n;
    ~Unmap() {
      if (p) ::munmap(p, n);
    }
  } unmap{map, size};
  const std::span<const uint8_t> bytes(static_cast<const uint8_t*>(map), size);
  return Reader(bytes, name).read(keep);
}

}  // namespace lmo::oracle
