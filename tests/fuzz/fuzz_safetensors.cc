// libFuzzer target: the safetensors reader (oracle/golden/safetensors.h read_safetensors_bytes), which
// `check` and `ref` run on users' files. Any byte string must either parse or be refused with
// SafetensorsError (exit 2 in the program). What parses must be written back canonically and
// re-read to the same content: the writer and the reader agree on every file the reader accepts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "oracle/golden/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lmo::oracle;
  SafetensorsContent content;
  try {
    content = read_safetensors_bytes(std::span<const uint8_t>(data, size), "fuzz");
  } catch (const SafetensorsError&) {
    return 0;  // a refused file: the expected outcome for nearly every input
  }
  const std::vector<uint8_t> canonical = write_safetensors_bytes(content, "fuzz");
  if (!(read_safetensors_bytes(canonical, "fuzz") == content)) std::abort();
  return 0;
}
