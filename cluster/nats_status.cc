#include "cluster/nats_status.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace goodput::cluster {
namespace {

constexpr absl::string_view kWrongLastSequence = "wrong last sequence";

absl::StatusCode CodeOf(natsStatus s, jsErrCode js_error) {
  if (js_error == JSStreamWrongLastSequenceErr) {
    return absl::StatusCode::kFailedPrecondition;
  }
  switch (s) {
    case NATS_NOT_FOUND:
      return absl::StatusCode::kNotFound;
    case NATS_TIMEOUT:
      return absl::StatusCode::kDeadlineExceeded;
    case NATS_NO_SERVER:
    case NATS_CONNECTION_CLOSED:
    case NATS_NOT_YET_CONNECTED:
    case NATS_NO_RESPONDERS:
    case NATS_STALE_CONNECTION:
    case NATS_IO_ERROR:
      return absl::StatusCode::kUnavailable;
    default:
      return absl::StatusCode::kInternal;
  }
}

}  // namespace

absl::Status FromNats(natsStatus s, jsErrCode js_error,
                      absl::string_view what) {
  if (s == NATS_OK) return absl::OkStatus();
  std::string text = absl::StrCat("nats: ", what, ": ", natsStatus_GetText(s));
  if (js_error != 0)
    absl::StrAppend(&text, " (JetStream error ", js_error, ")");
  // The client's thread-local detail, if it is about this error (it is not
  // cleared between calls, so one of another code would mislead).
  natsStatus last_status = NATS_OK;
  const char* last = nats_GetLastError(&last_status);
  absl::StatusCode code = CodeOf(s, js_error);
  if (last_status == s && last != nullptr && *last != '\0') {
    absl::StrAppend(&text, ": ", last);
    // The KV calls report a lost compare-and-set as a generic error whose
    // only sign is the server's text (JetStream error 10071).
    if (absl::StrContains(last, kWrongLastSequence)) {
      code = absl::StatusCode::kFailedPrecondition;
    }
  }
  return absl::Status(code, text);
}

}  // namespace goodput::cluster
