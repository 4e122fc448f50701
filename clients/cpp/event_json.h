// The wire format of the agent socket and of client spool files: one
// goodput.v1.Event as its proto3 JSON mapping on one line (SPEC section 2),
// with the proto's field names ("job_id", not "jobId"). Pure functions, safe
// from any thread.
#ifndef GOODPUT_CLIENTS_CPP_EVENT_JSON_H_
#define GOODPUT_CLIENTS_CPP_EVENT_JSON_H_

#include <cstdint>
#include <string>

#include "proto/event.pb.h"

namespace goodput::client {

// `event` as one JSON line ending in '\n'.
std::string EventToJsonLine(const v1::Event& event);

// One client spool line: {"id":"<id>","event":<event JSON>} and '\n'.
std::string SpoolRecordLine(const std::string& id, const v1::Event& event);

// Sets `event`'s time to `unix_nanos`, truncated to milliseconds (so the
// JSON reads like the Python client's).
void SetTimeMillis(int64_t unix_nanos, v1::Event* event);

}  // namespace goodput::client

#endif  // GOODPUT_CLIENTS_CPP_EVENT_JSON_H_
