#include "codec/reference_decoder.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "google/protobuf/stubs/stringpiece.h"
#include "google/protobuf/util/json_util.h"

namespace goodput {
namespace codec {
namespace {

// Makes control bytes (e.g. a newline inside a quoted value) visible.
std::string EscapeControl(absl::string_view text) {
  std::string out;
  for (const char c : text) {
    if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppend(
          &out, "\\x",
          absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2));
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// protobuf reports JSON syntax errors on three lines (message, the input
// around the error, a caret line); fold them into one line.
std::string OneLine(absl::string_view message) {
  const size_t first = message.find('\n');
  const size_t caret = message.rfind('\n');
  if (caret == absl::string_view::npos || first == caret ||
      message.substr(caret + 1).find_first_not_of(" ^") !=
          absl::string_view::npos) {
    return EscapeControl(message);
  }
  const absl::string_view near = message.substr(first + 1, caret - first - 1);
  return absl::StrCat(EscapeControl(message.substr(0, first)),
                      near.empty()
                          ? " at the end of the line"
                          : absl::StrCat(" near '", EscapeControl(near), "'"));
}

// Puts the field path first, like ValidateEvent's messages:
// "(a.b): text" -> "a.b: text", "(a) b: text" -> "a.b: text" and
// "(): text" -> "event: text".
std::string PathFirst(absl::string_view message) {
  absl::string_view rest = message;
  if (!absl::ConsumePrefix(&rest, "(")) return std::string(message);
  const size_t close = rest.find(')');
  if (close == absl::string_view::npos) return std::string(message);
  const absl::string_view inner = rest.substr(0, close);
  const absl::string_view path = inner.empty() ? "event" : inner;
  rest.remove_prefix(close + 1);
  if (absl::ConsumePrefix(&rest, ": ")) return absl::StrCat(path, ": ", rest);
  if (absl::ConsumePrefix(&rest, " ")) return absl::StrCat(path, ".", rest);
  return std::string(message);
}

std::string Describe(const google::protobuf::util::Status& status) {
  const absl::string_view message(status.message().data(),
                                  status.message().size());
  return absl::StrReplaceAll(PathFirst(OneLine(message)),
                             {{"type.googleapis.com/", ""}});
}

}  // namespace

absl::Status DecodeEventReferenceInto(absl::string_view line, v1::Event* out) {
  out->Clear();
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const google::protobuf::StringPiece input(line.data(), line.size());
  const auto status =
      google::protobuf::util::JsonStringToMessage(input, out, options);
  if (status.ok()) return absl::OkStatus();
  out->Clear();
  return absl::InvalidArgumentError(
      absl::StrCat("invalid event JSON: ", Describe(status)));
}

absl::StatusOr<v1::Event> DecodeEventReference(absl::string_view line) {
  v1::Event event;
  absl::Status status = DecodeEventReferenceInto(line, &event);
  if (!status.ok()) return status;
  return event;
}

}  // namespace codec
}  // namespace goodput
