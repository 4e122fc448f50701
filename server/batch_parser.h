// Parsing of an ingest Batch from its wire bytes with an error that says
// what is wrong (docs/delivery.md, "Refused batches"): protobuf refuses a
// whole message when one string field holds invalid UTF-8, and gRPC's
// typed streams then end without a word; IngestService reads raw bytes and
// calls this instead. Pure functions, safe from any thread.
#ifndef GOODPUT_SERVER_BATCH_PARSER_H_
#define GOODPUT_SERVER_BATCH_PARSER_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "proto/service.pb.h"

namespace goodput::server {

// Parses `bytes` into `*batch`. InvalidArgument naming the first event
// that does not parse ("batch.events[3]: ..."), or the batch itself.
absl::Status ParseBatch(absl::string_view bytes, v1::Batch* batch);

// Why `bytes`, which did not parse as a Batch, is bad (the slow path of
// ParseBatch, for callers that tried a zero-copy parse first).
absl::Status ExplainUnparsedBatch(absl::string_view bytes);

}  // namespace goodput::server

#endif  // GOODPUT_SERVER_BATCH_PARSER_H_
