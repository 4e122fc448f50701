#ifndef GOODPUT_CORE_CATALOG_H_
#define GOODPUT_CORE_CATALOG_H_

#include <map>
#include <string>

namespace goodput::core {

// Peak per-chip rates of one accelerator kind (SPEC section 3 rule 9), and
// what one chip costs and draws (issue 18: badput in $ and kWh; 0 =
// unknown, and the job's cost or energy is then left out).
struct ChipPeak {
  double flops_per_second = 0;   // dense BF16 FLOP/s per chip
  double bytes_per_second = 0;   // memory bandwidth B/s per chip
  double usd_per_chip_hour = 0;  // price of one chip for one hour
  double watts_per_chip = 0;     // power one busy chip draws
};

// The accelerator catalog: name -> per-chip peaks. A value type; not
// thread-safe for concurrent mutation, safe for concurrent reads.
class Catalog {
 public:
  // The built-in catalog of SPEC section 3 rule 9. Its prices and powers
  // are EXAMPLES (round figures of the kind public price lists and data
  // sheets give), not quotes: set your own with a --catalog file.
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
