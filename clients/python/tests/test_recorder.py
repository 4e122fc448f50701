"""Tests of the goodput Python client (stdlib unittest).

Run: /usr/bin/python3 -m unittest discover -s clients/python/tests -t clients/python
The wire-format test needs GOODPUTCTL (the goodputctl binary; ctest sets it).
"""

import glob
import json
import os
import re
import subprocess
import tempfile
import threading
import unittest
from unittest import mock

import goodput
from goodput import transport as transport_mod
from tests.fake_agent import FakeAgent


class FakeClock(object):
    """Seconds since the epoch that advance only when told."""

    def __init__(self, t=1795000000.0):
        self.t = t

    def __call__(self):
        return self.t


def make(agent, clock=None, **kwargs):
    kwargs.setdefault("rank", 0)
    return goodput.Recorder(job_id="j1", socket_path=agent.path,
                            spool_dir=os.path.join(agent.dir, "spool"),
                            clock=clock or FakeClock(), **kwargs)


class WireTest(unittest.TestCase):

    def test_time_is_rfc3339_utc_with_milliseconds(self):
        self.assertEqual(goodput.format_time(0), "1970-01-01T00:00:00.000Z")
        self.assertEqual(goodput.format_time(1795000000.1234),
                         "2026-11-18T11:06:40.123Z")
        self.assertEqual(goodput.format_time(1795000000.9996),
                         "2026-11-18T11:06:41.000Z")

    def test_events_follow_the_proto_json_mapping(self):
        agent = FakeAgent()
        clock = FakeClock()
        rec = make(agent, clock, chips=8, accelerator="tpu-v5p",
                   framework="pytorch", labels={"team": "x"}, step_flops=1e12,
                   attempt="a-1", submit=True)
        with rec.activity("COMPILE"):
            clock.t += 1
        rec.step(1, flops=2e12, bytes=3.5, input_wait_seconds=0.25)
        rec.checkpoint(1)
        rec.ended("SUCCEEDED")
        events = agent.wait_for(7)
        self.assertEqual(events[0], {
            "time": "2026-11-18T11:06:40.000Z", "job_id": "j1",
            "job_submitted": {"workload": "TRAINING", "chips": 8,
                              "accelerator": "tpu-v5p",
                              "framework": "pytorch",
                              "labels": {"team": "x"}, "step_flops": 1e12}})
        self.assertEqual(events[1], {"time": "2026-11-18T11:06:40.000Z",
                                     "job_id": "j1", "attempt": "a-1",
                                     "started": {}})
        self.assertEqual([e.get("activity") for e in events[2:4]],
                         [{"kind": "COMPILE"}, {"kind": "TRAINING"}])
        self.assertEqual(events[3]["time"], "2026-11-18T11:06:41.000Z")
        self.assertEqual(events[4]["step"], {"step": 1, "flops": 2e12,
                                             "bytes": 3.5,
                                             "input_wait_seconds": 0.25})
        self.assertEqual(events[5]["checkpoint"], {"step": 1})
        self.assertEqual(events[6]["job_ended"], {"outcome": "SUCCEEDED"})
        rec.close()

    @unittest.skipUnless(os.environ.get("GOODPUTCTL"), "needs GOODPUTCTL")
    def test_goodputctl_replay_accepts_and_counts_the_output(self):
        agent = FakeAgent()
        clock = FakeClock()
        rec = make(agent, clock, chips=4, accelerator="tpu-v5p", submit=True)
        with rec.activity("INIT"):
            clock.t += 2
        with rec.activity("RESTORE") as span:
            clock.t += 3
            span.step = 10
        for n in range(11, 15):
            with rec.activity("DATA_WAIT"):
                clock.t += 0.5
            clock.t += 1
            rec.step(n)
        with rec.activity("CHECKPOINT"):
            clock.t += 1
            rec.checkpoint(14)
        with rec.custom("eval"):
            clock.t += 4
        rec.ended("SUCCEEDED")
        events = agent.wait_for(22)
        path = os.path.join(agent.dir, "events.jsonl")
        with open(path, "w") as f:
            f.writelines(json.dumps(e) + "\n" for e in events)
        out = subprocess.run([os.environ["GOODPUTCTL"], "replay", path,
                              "--json"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, check=False)
        self.assertEqual(out.returncode, 0, out.stderr.decode())
        job = json.loads(out.stdout)["jobs"][0]
        seconds = job["seconds"]
        self.assertAlmostEqual(seconds["init"], 2)
        self.assertAlmostEqual(seconds["restore"], 3)
        self.assertAlmostEqual(seconds["data_wait"], 2)
        self.assertAlmostEqual(seconds["checkpoint"], 1)
        self.assertAlmostEqual(seconds["custom"], 4)
        self.assertAlmostEqual(seconds["productive"], 4)
        self.assertAlmostEqual(seconds["total"], 16)
        rec.close()


class ActivityTest(unittest.TestCase):

    def kinds(self, events):
        return [(e["activity"]["kind"], e["activity"].get("name"))
                for e in events if "activity" in e]

    def test_nesting_restores_the_previous_activity(self):
        agent = FakeAgent()
        rec = make(agent, workload="SERVING")
        with rec.activity("PREP"):
            with rec.custom("eval"):
                pass
            with rec.activity("restore", step=7):
                pass
        events = agent.wait_for(7)
        self.assertEqual(self.kinds(events), [
            ("PREP", None), ("CUSTOM", "eval"), ("PREP", None),
            ("RESTORE", None), ("PREP", None), ("SERVING", None)])
        self.assertEqual(events[4]["activity"]["step"], 7)
        rec.close()

    def test_exception_in_block_still_restores(self):
        agent = FakeAgent()
        rec = make(agent)
        with self.assertRaises(KeyError):
            with rec.activity("CHECKPOINT"):
                raise KeyError("from the training code")
        events = agent.wait_for(3)
        self.assertEqual(self.kinds(events), [("CHECKPOINT", None),
                                              ("TRAINING", None)])
        rec.close()

    def test_bad_arguments_are_counted_not_raised(self):
        agent = FakeAgent()
        rec = make(agent)
        with rec.activity("COOKING"):
            pass
        with rec.activity("CUSTOM"):
            pass
        rec.step("eleven")
        rec.step(3, flops=float("nan"))
        rec.ended("MAYBE")
        self.assertEqual(rec.errors, 5)
        rec.checkpoint(9)  # a good event after the bad ones
        self.assertEqual([list(e)[-1] for e in agent.wait_for(2)],
                         ["started", "checkpoint"])
        rec.close()

    def test_constructor_rejects_bad_job(self):
        with self.assertRaisesRegex(ValueError, "workload"):
            goodput.Recorder(job_id="j", workload="BAKING", rank=1)
        with self.assertRaisesRegex(ValueError, "chips"):
            goodput.Recorder(job_id="j", chips=0, rank=1)


class ElasticTest(unittest.TestCase):
    """SPEC rule 14: min_chips on job_submitted, activity RESHARD."""

    def test_min_chips_and_reshard_are_sent(self):
        agent = FakeAgent()
        rec = make(agent, chips=8, min_chips=4, attempt="a-1", submit=True)
        with rec.activity("RESHARD"):
            pass
        events = agent.wait_for(4)
        self.assertEqual(events[0]["job_submitted"]["min_chips"], 4)
        self.assertEqual(events[0]["job_submitted"]["chips"], 8)
        self.assertEqual(events[2]["activity"], {"kind": "RESHARD"})
        rec.close()

    def test_bad_min_chips_is_rejected_naming_the_field(self):
        for chips, min_chips in ((8, 0), (8, 9), (None, 4)):
            with self.assertRaisesRegex(ValueError, "min_chips"):
                goodput.Recorder(job_id="j", chips=chips, min_chips=min_chips,
                                 rank=1)


class RankAndAttemptTest(unittest.TestCase):

    def test_rank_from_environment(self):
        with mock.patch.dict(os.environ, {"RANK": "3"}):
            self.assertEqual(goodput.detect_rank(), 3)
        with mock.patch.dict(os.environ, {"JAX_PROCESS_INDEX": "1"}):
            os.environ.pop("RANK", None)
            self.assertEqual(goodput.detect_rank(), 1)

    def test_only_rank_zero_sends(self):
        agent = FakeAgent()
        with mock.patch.dict(os.environ, {"RANK": "1"}):
            rec = goodput.Recorder(job_id="j", socket_path=agent.path)
        self.assertFalse(rec.enabled)
        rec.step(1)
        rec.ended()
        with mock.patch.dict(os.environ, {"RANK": "0"}):
            rec0 = goodput.Recorder(job_id="j", socket_path=agent.path)
        rec0.step(1)
        self.assertEqual([list(e)[-1] for e in agent.wait_for(2)],
                         ["started", "step"])
        rec0.close()

    def test_attempt_from_launcher_else_fresh_uuid(self):
        agent = FakeAgent()
        with mock.patch.dict(os.environ, {"GOODPUT_ATTEMPT": "run-2"}):
            rec = make(agent, chips=8)
        self.assertEqual(rec.attempt, "run-2")
        rec.checkpoint(1)
        # Under the launcher the recorder does not submit the job.
        self.assertEqual([list(e)[-1] for e in agent.wait_for(2)],
                         ["started", "checkpoint"])
        env = dict(os.environ)
        env.pop("GOODPUT_ATTEMPT", None)
        with mock.patch.dict(os.environ, env, clear=True):
            a, b = make(agent), make(agent)
        self.assertRegex(a.attempt, "^[0-9a-f-]{36}$")
        self.assertNotEqual(a.attempt, b.attempt)
        for r in (rec, a, b):
            r.close()


class NeverBlockTest(unittest.TestCase):

    def test_without_agent_events_go_to_a_spool_file(self):
        d = tempfile.mkdtemp()
        rec = goodput.Recorder(job_id="j", rank=0,
                               socket_path=os.path.join(d, "absent.sock"),
                               spool_dir=os.path.join(d, "spool"))
        for n in range(1, 6):
            rec.step(n)
        self.assertTrue(rec.flush())
        self.assertEqual(glob.glob(os.path.join(d, "spool", "*.jsonl")), [])
        rec.close()
        files = glob.glob(os.path.join(d, "spool", "spool-*.jsonl"))
        self.assertEqual(len(files), 1)
        self.assertRegex(os.path.basename(files[0]),
                         r"^spool-%d-[0-9a-f]{32}\.jsonl$" % os.getpid())
        with open(files[0]) as f:
            records = [json.loads(l) for l in f]
        self.assertEqual(len(records), 6)
        self.assertEqual(len({r["id"] for r in records}), 6)
        self.assertEqual([r["event"].get("step", {}).get("step")
                          for r in records], [None, 1, 2, 3, 4, 5])
        self.assertEqual(rec.counts, {"sent": 0, "spooled": 6, "dropped": 0})

    def test_spool_is_handed_over_when_the_agent_comes_back(self):
        d = tempfile.mkdtemp()
        path = os.path.join(d, "agent.sock")
        t = goodput.Transport(path, os.path.join(d, "spool"),
                              retry_seconds=0)
        t.send({"n": 1})
        self.assertTrue(t.flush())
        self.assertEqual(len(glob.glob(os.path.join(d, "spool", "*.open"))), 1)
        agent = FakeAgent(path)
        t.send({"n": 2})
        self.assertEqual(agent.wait_for(1), [{"n": 2}])
        self.assertEqual(len(glob.glob(os.path.join(d, "spool", "*.jsonl"))),
                         1)
        self.assertEqual(glob.glob(os.path.join(d, "spool", "*.open")), [])
        t.close()

    def test_a_connection_the_agent_closed_is_replaced_not_spooled(self):
        d = tempfile.mkdtemp()
        path = os.path.join(d, "agent.sock")
        agent = FakeAgent(path)
        t = goodput.Transport(path, os.path.join(d, "spool"),
                              retry_seconds=0)
        t.send({"n": 1})
        self.assertEqual(agent.wait_for(1), [{"n": 1}])
        agent.shut_connections()  # idle, or evicted for a new client
        t.send({"n": 2})
        self.assertEqual(agent.wait_for(2), [{"n": 1}, {"n": 2}])
        self.assertTrue(t.flush())  # "sent" counts acknowledged events
        self.assertEqual(t.counts, {"sent": 2, "spooled": 0, "dropped": 0})
        self.assertEqual(glob.glob(os.path.join(d, "spool", "*")), [])
        t.close()

    def test_full_queue_drops_and_counts_without_blocking(self):
        d = tempfile.mkdtemp()
        gate = threading.Event()
        with mock.patch.object(transport_mod.Transport, "_deliver",
                               lambda self, e: gate.wait()):
            t = goodput.Transport(os.path.join(d, "a.sock"), d, queue_size=3)
            results = [t.send({"n": i}) for i in range(10)]
            # The thread holds one event; three more fit; the rest drop.
            self.assertGreaterEqual(results.count(False), 6)
            self.assertEqual(t.counts["dropped"], results.count(False))
            gate.set()
            t.close()

    def test_unwritable_spool_drops_and_counts(self):
        d = tempfile.mkdtemp()
        blocker = os.path.join(d, "file")
        open(blocker, "w").close()
        t = goodput.Transport(os.path.join(d, "a.sock"),
                              os.path.join(blocker, "spool"))
        self.assertTrue(t.send({"n": 1}))
        self.assertTrue(t.flush())
        self.assertEqual(t.counts, {"sent": 0, "spooled": 0, "dropped": 1})
        t.close()


class AckModeTest(unittest.TestCase):
    """docs/delivery.md, "The ack mode" (a real agent: tests/ack_kill_test)."""

    def transport(self, path, d, **kwargs):
        kwargs.setdefault("retry_seconds", 0)
        return goodput.Transport(path, os.path.join(d, "spool"), **kwargs)

    def spooled(self, d):
        records = []
        for name in glob.glob(os.path.join(d, "spool", "spool-*")):
            with open(name) as f:
                records += [json.loads(l) for l in f]
        return records

    def test_unacked_events_are_resent_with_their_ids_after_a_kill(self):
        d = tempfile.mkdtemp()
        path = os.path.join(d, "agent.sock")
        agent = FakeAgent(path)
        agent.hold_acks = True  # killed before it acknowledged them
        t = self.transport(path, d)
        for n in range(3):
            t.send({"n": n})
        agent.wait_for(3)
        first = agent.records()
        agent.close()
        os.unlink(path)
        second = FakeAgent(path)
        agent.kill_connections()
        self.assertEqual(second.wait_for(3), [{"n": 0}, {"n": 1}, {"n": 2}])
        self.assertEqual(second.records(), first)  # the same ids
        self.assertTrue(t.flush())
        self.assertEqual(t.counts, {"sent": 3, "spooled": 0, "dropped": 0})
        t.close()

    def test_acknowledged_events_are_not_resent(self):
        d = tempfile.mkdtemp()
        path = os.path.join(d, "agent.sock")
        agent = FakeAgent(path)
        t = self.transport(path, d)
        t.send({"n": 1})
        self.assertTrue(t.flush())
        agent.close()
        os.unlink(path)
        second = FakeAgent(path)
        agent.kill_connections()
        t.send({"n": 2})
        self.assertEqual(second.wait_for(1), [{"n": 2}])
        self.assertTrue(t.flush())
        self.assertEqual(second.events(), [{"n": 2}])
        self.assertEqual(t.counts["sent"], 2)
        t.close()

    def test_over_max_unacked_the_oldest_go_to_the_spool_file(self):
        d = tempfile.mkdtemp()
        path = os.path.join(d, "agent.sock")
        agent = FakeAgent(path)
        agent.hold_acks = True
        t = self.transport(path, d, max_unacked=2)
        for n in range(5):
            t.send({"n": n})
        self.assertFalse(t.flush(0.3))  # two are still unacknowledged
        self.assertEqual(t.counts["spooled"], 3)
        self.assertTrue(t.close(0.5))  # ... and go to the spool file too
        sent = {i: e for i, e in agent.records()}
        spooled = {r["id"]: r["event"] for r in self.spooled(d)}
        self.assertEqual(len(spooled), 5)
        self.assertEqual(spooled, sent)  # same ids: the agent drops repeats
        self.assertEqual(t.counts, {"sent": 0, "spooled": 5, "dropped": 0})

    def test_a_late_hello_answer_keeps_the_ack_mode(self):
        # A busy agent (every --max_connections slot taken) accepts the
        # connection after the client's socket_timeout, then answers the
        # hello: that connection is in ack mode on the agent's side, so
        # plain lines written on it would all be rejected, yet counted
        # "sent" (.ci/adversarial lost its first chunk so).
        d = tempfile.mkdtemp()
        path = os.path.join(d, "agent.sock")
        agent = FakeAgent(path, hello_delay=0.6)
        t = self.transport(path, d, socket_timeout=0.2)
        for n in range(3):
            t.send({"n": n})
        self.assertEqual(agent.wait_for(3), [{"n": 0}, {"n": 1}, {"n": 2}])
        self.assertTrue(t.flush())
        self.assertEqual(agent.rejected, 0)
        self.assertTrue(all(i for i, _ in agent.records()))  # with their ids
        self.assertEqual(t.counts, {"sent": 3, "spooled": 0, "dropped": 0})
        t.close()

    def test_an_agent_without_ack_mode_gets_plain_lines(self):
        d = tempfile.mkdtemp()
        path = os.path.join(d, "agent.sock")
        agent = FakeAgent(path, ack=False)
        t = self.transport(path, d, socket_timeout=0.2)
        t.send({"n": 1})
        self.assertEqual(agent.wait_for(1), [{"n": 1}])
        self.assertEqual(agent.records(), [(None, {"n": 1})])
        self.assertTrue(t.flush())
        self.assertEqual(t.counts, {"sent": 1, "spooled": 0, "dropped": 0})
        t.close()


if __name__ == "__main__":
    unittest.main()
