#include "core/catalog.h"

namespace goodput::core {

Catalog Catalog::Default() {
  Catalog c;
  // Peaks: SPEC section 3 rule 9. Price ($ per chip-hour) and power (W per
  // chip): EXAMPLES only, clearly not quotes (docs/semantics.md, "Badput
  // in $ and kWh").
  c.Set("tpu-v4", {275e12, 1.2e12, 3.2, 200});
  c.Set("tpu-v5e", {197e12, 0.819e12, 1.2, 200});
  c.Set("tpu-v5p", {459e12, 2.765e12, 4.2, 300});
  c.Set("tpu-v6e", {918e12, 1.64e12, 2.7, 300});
  c.Set("a100", {312e12, 2.039e12, 3.0, 400});
  c.Set("h100", {989e12, 3.35e12, 5.0, 700});
  c.Set("h200", {989e12, 4.8e12, 6.0, 700});
  c.Set("b200", {2250e12, 8.0e12, 9.0, 1000});
  return c;
}

const ChipPeak* Catalog::Find(const std::string& name) const {
  auto it = peaks_.find(name);
  return it == peaks_.end() ? nullptr : &it->second;
}

}  // namespace goodput::core
