#include "kernels/api/storage.h"

namespace lmo::kernels {

std::optional<Storage> parse_storage(std::string_view name) {
  for (Storage s : kAllStorages) {
    if (storage_name(s) == name) return s;
  }
  return std::nullopt;
}

}  // namespace lmo::kernels
