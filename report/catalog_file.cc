#include "report/catalog_file.h"

#include <cmath>
#include <exception>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace goodput::report {
namespace {

using Json = nlohmann::json;

// The parsed text; the one place where nlohmann exceptions are caught.
absl::StatusOr<Json> ParseJson(absl::string_view text) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("not JSON: ", e.what()));
  }
}

absl::StatusOr<double> PositiveNumber(const Json& entry,
                                      const std::string& name,
                                      const char* field) {
  auto it = entry.find(field);
  if (it == entry.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ".", field, ": missing"));
  }
  double v = it->is_number() ? it->get<double>() : -1;
  if (!(v > 0) || !std::isfinite(v)) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ".", field, ": must be a positive number, got ",
                     it->dump(-1, ' ', false, Json::error_handler_t::replace)));
  }
  return v;
}

absl::StatusOr<core::ChipPeak> ParseEntry(const std::string& name,
                                          const Json& entry) {
  if (!entry.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": want an object"));
  }
  for (const auto& [key, unused] : entry.items()) {
    if (key != "peak_flops" && key != "peak_bytes_per_second") {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ".", key, ": unknown field"));
    }
  }
  absl::StatusOr<double> flops = PositiveNumber(entry, name, "peak_flops");
  if (!flops.ok()) return flops.status();
  absl::StatusOr<double> bytes =
      PositiveNumber(entry, name, "peak_bytes_per_second");
  if (!bytes.ok()) return bytes.status();
  return core::ChipPeak{*flops, *bytes};
}

}  // namespace

absl::Status ApplyCatalogJson(absl::string_view text, core::Catalog* catalog) {
  absl::StatusOr<Json> json = ParseJson(text);
  if (!json.ok()) return json.status();
  if (!json->is_object()) {
    return absl::InvalidArgumentError(
        "want an object of accelerator name -> {peak_flops, "
        "peak_bytes_per_second}");
  }
  core::Catalog updated = *catalog;
  for (const auto& [name, entry] : json->items()) {
    absl::StatusOr<core::ChipPeak> peak = ParseEntry(name, entry);
    if (!peak.ok()) return peak.status();
    updated.Set(name, *peak);
  }
  *catalog = std::move(updated);
  return absl::OkStatus();
}

}  // namespace goodput::report
