#ifndef GOODPUT_CORE_STATE_FIELDS_H_
#define GOODPUT_CORE_STATE_FIELDS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace goodput::core {

// Helpers of the metrics state's save and load (proto/metrics_state.proto):
// fixed-size arrays as repeated fields, and errors naming the field.

// DataLoss "`field`: `what`": a saved state that does not hold together.
inline absl::Status CorruptField(absl::string_view field,
                                 absl::string_view what) {
  return absl::DataLossError(absl::StrCat(field, ": ", what));
}

// a + b and a - b wrapping around instead of overflowing: the deltas of
// columns of a saved state (a corrupt one must not be undefined behavior;
// a wrapped sum is caught by the checks after it or is a wrong, defined
// value).
inline int64_t WrappingAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}
inline int64_t WrappingSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) -
                              static_cast<uint64_t>(b));
}

// `field` + "." + `sub`, for errors of nested messages.
inline std::string SubField(absl::string_view field, absl::string_view sub) {
  return absl::StrCat(field, ".", sub);
}

// Appends every element of `in` to the repeated field `*out`.
template <typename T, size_t n, typename Repeated>
void SaveArray(const std::array<T, n>& in, Repeated* out) {
  out->Clear();
  for (const T& v : in) out->Add(v);
}

// Copies the repeated field `in` into `*out`; it must hold exactly n values.
template <typename T, size_t n, typename Repeated>
absl::Status LoadArray(const Repeated& in, absl::string_view field,
                       std::array<T, n>* out) {
  if (static_cast<size_t>(in.size()) != n) {
    return CorruptField(field, absl::StrCat(in.size(), " values, want ", n));
  }
  for (size_t i = 0; i < n; ++i) (*out)[i] = static_cast<T>(in[i]);
  return absl::OkStatus();
}

// As LoadArray for a per-category array, which may also hold one value
// fewer: a record written before the last category (`excluded`) was added
// reads with it 0.
template <typename T, size_t n, typename Repeated>
absl::Status LoadCategoryArray(const Repeated& in, absl::string_view field,
                               std::array<T, n>* out) {
  if (static_cast<size_t>(in.size()) + 1 != n) return LoadArray(in, field, out);
  out->fill(T{});
  for (size_t i = 0; i + 1 < n; ++i) (*out)[i] = static_cast<T>(in[i]);
  return absl::OkStatus();
}

}  // namespace goodput::core

#endif  // GOODPUT_CORE_STATE_FIELDS_H_
