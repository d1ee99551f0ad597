"""A client for the harness binary ``zkh`` (harness/): real ZooKeeper
servers behind proxies that can expire, partition or reset one session.

One ``Harness`` is one ``zkh`` process and one ensemble; its servers die with it.
"""

import json
import os
import subprocess
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def zkh_binary() -> Path:
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    binary = target / "debug" / "zkh"
    if not binary.exists():
        raise RuntimeError(f"{binary} is missing: run `cargo build -p zk-harness --bin zkh`")
    return binary


def _select(session_id, op, path, nth, prefix=""):
    fields = {prefix + "op": op, prefix + "path": path, prefix + "nth": nth}
    if not prefix:
        fields["session"] = str(session_id)
    return {k: v for k, v in fields.items() if v is not None}


class HarnessError(RuntimeError):
    """zkh answered a command with an error."""


class Harness:
    """Starts ``zkh`` and an ensemble: ``Harness(servers=1, force_sync=True)``."""

    def __init__(self, **start):
        self._process = subprocess.Popen(
            [str(zkh_binary())], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        self._lock = threading.Lock()
        try:
            started = self.call("start", **start)
        except BaseException:
            self.close()
            raise
        #: Connect string through the proxies: clients under test (expiry works).
        self.connect = started["connect"]
        #: Straight to the servers: benchmarks.
        self.direct = started["direct"]
        #: With ``tls``: the secureClientPorts as ``localhost:port`` (the name the
        #: servers' certificate carries) and as ``127.0.0.1:port`` (fails a host
        #: name check), and the PEM paths (harness/README.md); else None.
        self.secure = started.get("secure")
        self.secure_by_ip = started.get("secure_by_ip")
        self.tls_files = started.get("tls_files")

    def call(self, cmd: str, **fields):
        """Sends one command and returns its answer; raises HarnessError on failure."""
        with self._lock:
            self._process.stdin.write(json.dumps({"cmd": cmd, **fields}) + "\n")
            self._process.stdin.flush()
            line = self._process.stdout.readline()
        if not line:
            raise HarnessError(f"zkh exited during {cmd!r}")
        answer = json.loads(line)
        if not answer.get("ok"):
            raise HarnessError(f"{cmd}: {answer.get('error')}")
        return answer

    def expire(self, session_id: int) -> None:
        """Expires a session that connected through ``connect``. Session ids
        exceed 2**53, so they travel as strings."""
        self.call("expire", session=str(session_id))

    def partition(self, session_id: int) -> None:
        self.call("partition", session=str(session_id))

    def heal(self, session_id: int) -> None:
        self.call("heal", session=str(session_id))

    # Request-level faults (harness/README.md). A fault picks the
    # ``nth`` request of a session with ``op`` (ZooKeeper's name, e.g.
    # "create2", which zoolock sends, or "create", which kazoo sends; or a
    # list of names; any op if None) and a path starting with ``path``. It
    # fires once; the methods return its id.

    def drop_reply(self, session_id: int, op=None, path=None, nth: int = 1) -> int:
        """The server applies the request, its reply is dropped and the
        connection reset: the client sees a connection loss."""
        return self.call("drop_reply", **_select(session_id, op, path, nth))["fault"]

    def reset_before_reply(self, session_id: int, op=None, path=None, nth: int = 1) -> int:
        """The request goes to the server and the connection is reset at
        once: the client sees a connection loss, the server applies it."""
        return self.call("reset_before_reply", **_select(session_id, op, path, nth))["fault"]

    def land_late(
        self, session_id: int, op=None, path=None, nth: int = 1,
        land: str = "before", land_op=None, land_path=None, land_nth: int = 1,
    ) -> int:
        """The request is held back and the connection reset (the server has
        not seen it); once the client reconnected, it goes to the server
        just ``land`` ("before" or "after") the session's ``land_nth`` later
        request with ``land_op`` under ``land_path``, and its reply is
        swallowed. ``land="after", land_nth=n`` lands it after n requests."""
        fields = _select(session_id, op, path, nth)
        fields.update(_select(session_id, land_op, land_path, land_nth, prefix="land_"))
        return self.call("land_late", land=land, **fields)["fault"]

    def fault(self, fault_id: int) -> dict:
        """What the fault did: ``state`` ("armed", ..., "fired", "missed",
        "disarmed"), ``op``, ``path``, ``xid``, ``reply_err``, ``reply_zxid``."""
        return self.call("fault", fault=fault_id)

    def wait_fault(self, fault_id: int, until: str = "fired", timeout: float = 10.0) -> dict:
        """Waits until the fault reached ``until``; HarnessError on timeout,
        or if it was missed or disarmed."""
        return self.call("wait_fault", fault=fault_id, until=until, timeout_ms=int(timeout * 1000))

    def disarm(self, fault_id: int) -> dict:
        """Disarms the fault unless a request matched it already."""
        return self.call("disarm", fault=fault_id)

    def mntr(self, server: int = 0) -> dict:
        return self.call("mntr", server=server)["mntr"]

    def close(self) -> None:
        """Stops the servers (zkh also does when its stdin closes)."""
        if self._process.poll() is None:
            try:
                self._process.stdin.close()
            except OSError:
                pass
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        if self._process.stdout:
            self._process.stdout.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
