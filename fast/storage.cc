#include "fast/storage.h"

namespace lmo::fast {

std::optional<Storage> parse_storage(std::string_view name) {
  for (Storage s : kAllStorages) {
    if (storage_name(s) == name) return s;
  }
  return std::nullopt;
}

}  // namespace lmo::fast
