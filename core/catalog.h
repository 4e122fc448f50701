#ifndef GOODPUT_CORE_CATALOG_H_
#define GOODPUT_CORE_CATALOG_H_

#include <map>
#include <string>

namespace goodput::core {

// Peak per-chip rates of one accelerator kind (SPEC section 3 rule 9).
struct ChipPeak {
  double flops_per_second = 0;  // dense BF16 FLOP/s per chip
  double bytes_per_second = 0;  // memory bandwidth B/s per chip
};

// The accelerator catalog: name -> per-chip peaks. A value type; not
// thread-safe for concurrent mutation, safe for concurrent reads.
class Catalog {
 public:
  // The built-in catalog of SPEC section 3 rule 9.
  static Catalog Default();

  // Adds `name` or replaces its entry.
  void Set(const std::string& name, ChipPeak peak) { peaks_[name] = peak; }

  // The entry for `name`, or nullptr if it is not in the catalog.
  const ChipPeak* Find(const std::string& name) const;

  const std::map<std::string, ChipPeak>& entries() const { return peaks_; }

 private:
  std::map<std::string, ChipPeak> peaks_;
};

}  // namespace goodput::core

#endif  // GOODPUT_CORE_CATALOG_H_
