#!/usr/bin/python3
"""A leaselab agent in Python: the spec's Redis-lease election with redis-py.

The harness (chaos run --backend process --agent "python3 agent.py") starts
this program once per instance. It speaks the agent protocol of
docs/agents.md: a hello on stdout, then one JSON event per line; commands on
stdin (stop); stderr is its log. It implements the spec's algorithm:

  follower: every Wait, SET key id PX ttl NX; won -> leader
  leader:   after TTL/2 + jitter, renew (GET == id -> PEXPIRE); 0 or an
            error -> follower, next election after Wait
  stop:     (SIGTERM or the stop command) step down, release (GET == id ->
            DEL), say stopped, exit

Every delay is counted from the end of the call before it, as the spec's
timers are armed when a result comes back. Each redis-py attempt is bounded
by the read timeout (LEASELAB_READ_TIMEOUT_MS, default 5 s), and a timed-out
call is retried once unless the scenario's client has no retries
(client_options; AGENT_PYTHON_RETRIES overrides the count, 0: none, and
AGENT_PYTHON_READ_TIMEOUT_MS the timeout, 0: none). The
hello declares that client, so the harness predicts from what redis-py
does here, not from go-redis.

stdout is written line by line and flushed after each line (emit): a
buffered stdout would hold the hello back, and the harness would report
"no hello".

It needs redis-py (Debian: python3-redis). Clock commands are not declared:
its timers run on the machine's monotonic clock, which the harness does not
bend.
"""

import json
import os
import random
import signal
import sys
import threading
import time
import uuid

import redis
from redis.backoff import ConstantBackoff
from redis.retry import Retry

RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""

RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


def env_ms(name, default):
    """A duration in (possibly fractional) milliseconds from the environment, in seconds."""
    v = os.environ.get(name, "")
    return float(v) / 1000.0 if v else default


BACKOFF = 0.01  # seconds before a retry


def client_options(timeout):
    """redis-py options, and the hello's declaration of that client.

    A timed-out call is retried once when the scenario's client has
    retries (LEASELAB_SCENARIO's params.client.max_retries: -1 is none),
    AGENT_PYTHON_RETRIES times if that is set. redis-py 4.3 then sends a
    timed-out call again on a new connection, whose AUTH times out in
    turn: 2 x the read timeout and a backoff in all. A refused connection
    is retried as often; a reset one fails at once. The declaration says
    so (docs/agents.md, Declaring the client), and the harness's bounds
    follow it.
    """
    scenario = json.loads(os.environ.get("LEASELAB_SCENARIO") or "{}")
    retries = 0 if scenario.get("params", {}).get("client", {}).get("max_retries", 0) < 0 else 1
    if os.environ.get("AGENT_PYTHON_RETRIES"):
        retries = int(os.environ["AGENT_PYTHON_RETRIES"])
    declared = {"library": "redis-py " + redis.__version__,
                "read_timeout_ms": (timeout or 0) * 1000, "retries": retries}
    # A new connection's handshake: AUTH with a password, SELECT for a db.
    handshake = bool(os.environ.get("LEASELAB_REDIS_PASSWORD")) + bool(int(os.environ.get("LEASELAB_REDIS_DB") or 0))
    if handshake:
        declared["handshake_round_trips"] = handshake
    if retries <= 0:
        return {}, declared
    declared.update(retry_on_timeout=True, retry_backoff_ms=BACKOFF * 1000)
    return {"retry": Retry(ConstantBackoff(BACKOFF), retries), "retry_on_timeout": True}, declared


class Agent:
    def __init__(self):
        host, _, port = os.environ["LEASELAB_REDIS_ADDR"].rpartition(":")
        self.key = os.environ["LEASELAB_KEY"]
        self.ttl = env_ms("LEASELAB_TTL_MS", 5.0)
        self.wait = env_ms("LEASELAB_WAIT_MS", 6.0)
        self.jitter = env_ms("LEASELAB_JITTER_MS", 0.005)
        timeout = env_ms("LEASELAB_READ_TIMEOUT_MS", 0) or 5.0
        if os.environ.get("AGENT_PYTHON_READ_TIMEOUT_MS"):  # the example's own setting; 0: none
            timeout = env_ms("AGENT_PYTHON_READ_TIMEOUT_MS", 0) or None
        # Safe mode (lease guard, fencing tokens) is not implemented here:
        # the hello does not declare "safe", and the harness refuses a
        # safe-mode scenario for this agent before running it.
        self.safe = os.environ.get("LEASELAB_SAFE") == "1"
        self.id = uuid.uuid4().hex
        options, self.client = client_options(timeout)
        self.rdb = redis.Redis(host=host, port=int(port), socket_timeout=timeout,
                               socket_connect_timeout=timeout, **options,
                               username=os.environ.get("LEASELAB_REDIS_USERNAME") or None,
                               password=os.environ.get("LEASELAB_REDIS_PASSWORD") or None,
                               db=int(os.environ.get("LEASELAB_REDIS_DB") or 0))
        self.renew = self.rdb.register_script(RENEW)
        self.release = self.rdb.register_script(RELEASE)
        self.out = threading.Lock()
        self.wake = threading.Event()
        self.stopping = False
        self.leader = False
        self.term = 0

    def emit(self, **event):
        event["t"] = time.time_ns()
        with self.out:
            sys.stdout.write(json.dumps(event, separators=(",", ":")) + "\n")
            sys.stdout.flush()

    def log(self, msg):
        sys.stderr.write("%.3f %s %s\n" % (time.monotonic(), self.id[:8], msg))
        sys.stderr.flush()

    def stop(self, *_):
        self.stopping = True
        self.wake.set()

    def commands(self):
        """Serve stdin: stop commands; its end means the harness is gone."""
        for line in sys.stdin:
            try:
                cmd = json.loads(line)
            except ValueError:
                self.log("malformed command: %r" % line)
                continue
            if cmd.get("cmd") == "stop":
                self.stop()
            elif cmd.get("seq"):
                self.emit(type="reply", seq=cmd["seq"],
                          err="%s: this agent does not declare it" % cmd.get("cmd"))
        os._exit(0)  # the harness is gone: nothing to report to

    def step(self):
        """One election or renewal; returns the delay until the next."""
        if not self.leader:
            try:
                won = self.rdb.set(self.key, self.id, px=int(self.ttl * 1000), nx=True)
            except redis.RedisError as e:
                self.emit(type="error", err="acquire: %s" % e)
                return self.wait
            if not won:
                return self.wait
            self.leader, self.term = True, self.term + 1
            self.emit(type="promoted", term=self.term)
            self.log("promoted, term %d" % self.term)
        else:
            try:
                ok = self.renew(keys=[self.key], args=[self.id, int(self.ttl * 1000)])
            except redis.RedisError as e:
                self.leader = False
                self.emit(type="error", err="renew: %s" % e)
                self.emit(type="demoted", reason="error")
                self.log("demoted: renew failed: %s" % e)
                return self.wait
            if ok != 1:
                self.leader = False
                self.emit(type="demoted", reason="lost")
                self.log("demoted: the lease is not ours")
                return self.wait
        return self.ttl / 2 + random.random() * self.jitter

    def run(self):
        signal.signal(signal.SIGTERM, self.stop)
        self.emit(type="hello", protocol=1, id=self.id, key=self.key,
                  capabilities=["stop"], agent="agent-python", client=self.client)
        if self.safe:
            sys.exit("agent.py: safe mode (lease guard, fencing tokens) is not implemented here")
        threading.Thread(target=self.commands, daemon=True).start()
        next_at = time.monotonic()
        while not self.stopping:
            delay = next_at - time.monotonic()
            if delay > 0 and self.wake.wait(delay):
                continue
            # The spec times the next call from this one's end (a slow
            # renewal delays the next by its own length): step() first,
            # then the clock. `time.monotonic() + self.step()` read the
            # clock before the call, timing it from the send, which hid the
            # slow-redis finding (renewals every max(TTL/2, call) instead of
            # TTL/2 + call) and retried Wait after a timed-out call's send.
            delay = self.step()
            next_at = time.monotonic() + delay
        if self.leader:
            self.leader = False
            self.emit(type="demoted", reason="stop")
            try:
                self.release(keys=[self.key], args=[self.id])
            except redis.RedisError as e:
                self.log("release failed: %s" % e)
        self.emit(type="stopped")
        self.log("stopped")


if __name__ == "__main__":
    Agent().run()
