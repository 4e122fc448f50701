#include "report/catalog_file.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <iterator>
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

constexpr const char* kFields[] = {"peak_flops", "peak_bytes_per_second",
                                   "usd_per_chip_hour", "watts_per_chip"};

absl::Status CheckFields(const std::string& name, const Json& entry) {
  if (!entry.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": want an object"));
  }
  for (const auto& [key, unused] : entry.items()) {
    if (std::find(std::begin(kFields), std::end(kFields), key) ==
        std::end(kFields)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ".", key, ": unknown field"));
    }
  }
  return absl::OkStatus();
}

// Sets `*out` from `field` if present; a missing field is an error only if
// `required`.
absl::Status ReadField(const Json& entry, const std::string& name,
                       const char* field, bool required, double* out) {
  if (!required && !entry.contains(field)) return absl::OkStatus();
  absl::StatusOr<double> v = PositiveNumber(entry, name, field);
  if (!v.ok()) return v.status();
  *out = *v;
  return absl::OkStatus();
}

// The entry over `base` (the catalog's current one, or nullptr for a new
// accelerator, which needs both peaks).
absl::StatusOr<core::ChipPeak> ParseEntry(const std::string& name,
                                          const Json& entry,
                                          const core::ChipPeak* base) {
  absl::Status status = CheckFields(name, entry);
  core::ChipPeak out = base != nullptr ? *base : core::ChipPeak{};
  const bool is_new = base == nullptr;
  if (status.ok()) {
    status =
        ReadField(entry, name, "peak_flops", is_new, &out.flops_per_second);
  }
  if (status.ok()) {
    status = ReadField(entry, name, "peak_bytes_per_second", is_new,
                       &out.bytes_per_second);
  }
  if (status.ok()) {
    status = ReadField(entry, name, "usd_per_chip_hour", false,
                       &out.usd_per_chip_hour);
  }
  if (status.ok()) {
    status =
        ReadField(entry, name, "watts_per_chip", false, &out.watts_per_chip);
  }
  if (!status.ok()) return status;
  return out;
}

}  // namespace

absl::Status ApplyCatalogJson(absl::string_view text, core::Catalog* catalog) {
  absl::StatusOr<Json> json = ParseJson(text);
  if (!json.ok()) return json.status();
  if (!json->is_object()) {
    return absl::InvalidArgumentError(
        "want an object of accelerator name -> {peak_flops, "
        "peak_bytes_per_second, usd_per_chip_hour, watts_per_chip}");
  }
  core::Catalog updated = *catalog;
  for (const auto& [name, entry] : json->items()) {
    absl::StatusOr<core::ChipPeak> peak =
        ParseEntry(name, entry, updated.Find(name));
    if (!peak.ok()) return peak.status();
    updated.Set(name, *peak);
  }
  *catalog = std::move(updated);
  return absl::OkStatus();
}

}  // namespace goodput::report
