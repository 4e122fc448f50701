#include "core/category.h"

namespace goodput::core {

const char* CategoryName(Category c) {
  static constexpr const char* kNames[kNumCategories] = {
      "queued",  "recovery",   "init",       "prep",    "compile",
      "restore", "data_wait",  "checkpoint", "reshard", "custom",
      "idle",    "productive", "lost",       "excluded"};
  return kNames[Index(c)];
}

}  // namespace goodput::core
