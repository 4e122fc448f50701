#ifndef GOODPUT_REPORT_CATALOG_FILE_H_
#define GOODPUT_REPORT_CATALOG_FILE_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/catalog.h"

namespace goodput::report {

// Applies the accelerator catalog overrides of a --catalog file to
// `catalog`. The text is one JSON object mapping an accelerator name to its
// per-chip peaks, both required, positive and finite:
//
//   {"tpu-v7": {"peak_flops": 2.3e15, "peak_bytes_per_second": 7.4e12},
//    "h100":   {"peak_flops": 1.979e15, "peak_bytes_per_second": 3.35e12}}
//
// `peak_flops` is dense FLOP/s per chip (the built-in catalog uses BF16),
// `peak_bytes_per_second` memory bandwidth per chip. Entries add to or
// replace the built-in ones. Unknown fields are errors (typos would
// otherwise pass silently). On error `catalog` is unchanged and the message
// names the entry and field. Stateless, thread-safe.
absl::Status ApplyCatalogJson(absl::string_view text, core::Catalog* catalog);

}  // namespace goodput::report

#endif  // GOODPUT_REPORT_CATALOG_FILE_H_
