"""Streams a JSON Lines file through the Python client's ack mode, in chunks
(tests/ack_kill_test.cc kills the agent between and during them).

    ack_stream_client.py CLIENT_DIR SOCKET SPOOL_DIR EVENTS CHUNKS GO_PREFIX

Sends chunk k once the file GO_PREFIX<k> exists (chunk 0 at once), then
closes the transport (waiting for the last acks; the rest goes to the spool
file) and prints its counts as JSON. Exit 1 if any event was dropped.
"""

import json
import os
import sys
import time


def main():
    client_dir, sock, spool, path, chunks, go = sys.argv[1:7]
    sys.path.insert(0, client_dir)
    from goodput.transport import Transport
    with open(path) as f:
        events = [json.loads(line) for line in f if line.strip()]
    chunks = int(chunks)
    t = Transport(sock, spool, queue_size=len(events) + 10, retry_seconds=0.05,
                  max_unacked=500)
    size = (len(events) + chunks - 1) // chunks
    for k in range(chunks):
        while k > 0 and not os.path.exists(go + str(k)):
            time.sleep(0.01)  # the test's signal: not a wait for the agent
        for i, event in enumerate(events[k * size:(k + 1) * size]):
            t.send(event)
            if i % 20 == 19:
                time.sleep(0.002)  # a training loop's pace, not a sync
    ok = t.close(timeout=120)
    counts = t.counts
    print(json.dumps({"closed": ok, "counts": counts}))
    return 0 if ok and counts["dropped"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
