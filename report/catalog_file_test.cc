#include "report/catalog_file.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::report {
namespace {

using ::testing::HasSubstr;

TEST(ApplyCatalogJsonTest, AddsAndOverridesEntries) {
  core::Catalog catalog = core::Catalog::Default();
  ASSERT_TRUE(ApplyCatalogJson(R"({
      "tpu-v7": {"peak_flops": 2.3e15, "peak_bytes_per_second": 7.4e12},
      "h100": {"peak_flops": 1979e12, "peak_bytes_per_second": 3.35e12}})",
                               &catalog)
                  .ok());
  ASSERT_NE(catalog.Find("tpu-v7"), nullptr);
  EXPECT_EQ(catalog.Find("tpu-v7")->flops_per_second, 2.3e15);
  EXPECT_EQ(catalog.Find("tpu-v7")->bytes_per_second, 7.4e12);
  EXPECT_EQ(catalog.Find("h100")->flops_per_second, 1979e12);
  EXPECT_EQ(catalog.Find("tpu-v5p")->flops_per_second, 459e12);  // kept
}

TEST(ApplyCatalogJsonTest, PriceAndPowerOverrideOnlyWhatTheyName) {
  core::Catalog catalog = core::Catalog::Default();
  ASSERT_TRUE(ApplyCatalogJson(R"({
      "h100": {"usd_per_chip_hour": 2.1},
      "mi300x": {"peak_flops": 1307e12, "peak_bytes_per_second": 5.3e12,
                 "watts_per_chip": 750}})",
                               &catalog)
                  .ok());
  const core::ChipPeak* h100 = catalog.Find("h100");
  EXPECT_EQ(h100->usd_per_chip_hour, 2.1);
  EXPECT_EQ(h100->watts_per_chip, 700);       // the example kept
  EXPECT_EQ(h100->flops_per_second, 989e12);  // kept
  EXPECT_EQ(catalog.Find("mi300x")->watts_per_chip, 750);
  EXPECT_EQ(catalog.Find("mi300x")->usd_per_chip_hour, 0);  // unknown
}

TEST(ApplyCatalogJsonTest, EmptyObjectChangesNothing) {
  core::Catalog catalog = core::Catalog::Default();
  ASSERT_TRUE(ApplyCatalogJson("{}", &catalog).ok());
  EXPECT_EQ(catalog.entries().size(),
            core::Catalog::Default().entries().size());
}

struct BadCase {
  const char* text;
  const char* message;
};

TEST(ApplyCatalogJsonTest, ErrorsNameTheEntryAndFieldAndChangeNothing) {
  const BadCase cases[] = {
      {"{", "not JSON"},
      {"[1]", "want an object"},
      {R"({"x": 1})", "x: want an object"},
      {R"({"y": {"peak_flops": 1e15}})", "y.peak_bytes_per_second: missing"},
      {R"({"x": {"usd_per_chip_hour": -2}})",
       "x.usd_per_chip_hour: must be a positive number, got -2"},
      {R"({"x": {"watts_per_chip": "700"}})",
       "x.watts_per_chip: must be a positive number"},
      {R"({"x": {"peak_flops": -1, "peak_bytes_per_second": 1}})",
       "x.peak_flops: must be a positive number, got -1"},
      {R"({"x": {"peak_flops": "1e15", "peak_bytes_per_second": 1}})",
       "x.peak_flops: must be a positive number"},
      {R"({"x": {"peak_flops": 1, "peak_bytes_per_second": 1, "peak_flop": 2}})",
       "x.peak_flop: unknown field"},
  };
  for (const BadCase& c : cases) {
    core::Catalog catalog = core::Catalog::Default();
    catalog.Set("x", {1, 1});
    absl::Status status = ApplyCatalogJson(c.text, &catalog);
    EXPECT_FALSE(status.ok()) << c.text;
    EXPECT_THAT(status.message(), HasSubstr(c.message)) << c.text;
    EXPECT_EQ(catalog.Find("x")->flops_per_second, 1) << c.text;
  }
}

TEST(ApplyCatalogJsonTest, NoPartialUpdate) {
  core::Catalog catalog = core::Catalog::Default();
  absl::Status status = ApplyCatalogJson(
      R"({"a": {"peak_flops": 5, "peak_bytes_per_second": 5}, "z": 0})",
      &catalog);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(catalog.Find("a"), nullptr);
}

}  // namespace
}  // namespace goodput::report
