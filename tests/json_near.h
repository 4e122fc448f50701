// JsonNear: equality of two JSON values with numbers compared up to a
// relative 1e-9, for end-to-end tests that compare shards' merged reports
// with a replay (merged totals are summed in another order, so the last
// digits may differ; one server's live report equals a replay exactly).
// Header-only; a pure function.
#ifndef GOODPUT_TESTS_JSON_NEAR_H_
#define GOODPUT_TESTS_JSON_NEAR_H_

#include <algorithm>
#include <cmath>

#include "nlohmann/json.hpp"

namespace goodput::testing {

inline bool JsonNear(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    return std::abs(x - y) <= 1e-9 * std::max(std::abs(x), std::abs(y));
  }
  if (a.type() != b.type() || a.size() != b.size()) return false;
  if (a.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      if (!b.contains(it.key()) || !JsonNear(it.value(), b[it.key()])) {
        return false;
      }
    }
    return true;
  }
  if (a.is_array()) {
    for (size_t i = 0; i < a.size(); ++i) {
      if (!JsonNear(a[i], b[i])) return false;
    }
    return true;
  }
  return a == b;
}

}  // namespace goodput::testing

#endif  // GOODPUT_TESTS_JSON_NEAR_H_
