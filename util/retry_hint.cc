#include "util/retry_hint.h"

#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace goodput {

void SetRetryHint(grpc::ServerContext* context, absl::Duration delay) {
  const int64_t ms = std::max<int64_t>(1, absl::ToInt64Milliseconds(delay));
  context->AddTrailingMetadata(kRetryAfterMetadata, absl::StrCat(ms));
}

std::optional<absl::Duration> GetRetryHint(const grpc::ClientContext& context) {
  const auto& trailers = context.GetServerTrailingMetadata();
  auto it = trailers.find(kRetryAfterMetadata);
  if (it == trailers.end()) return std::nullopt;
  int64_t ms = 0;
  if (!absl::SimpleAtoi(absl::string_view(it->second.data(), it->second.size()),
                        &ms) ||
      ms <= 0) {
    return std::nullopt;
  }
  return absl::Milliseconds(ms);
}

}  // namespace goodput
