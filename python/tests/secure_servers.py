"""ZooKeeper servers in special modes (harness/README.md), each started on
first use and shared by the tests and the bad-input cases: TLS without and
with client certificates, SASL DIGEST-MD5 required of every session, and
kazoo's reconfig ensemble (3 servers, reconfigEnabled, superuser super:test).
zkh stops them when this process ends (its stdin closes)."""

import atexit
import threading

from zkh import Harness

#: The SASL server's one JAAS user.
SASL_USER, SASL_PASSWORD = "locker", "s3cret-pw"

_MODES = {
    "reconfig": {"servers": 3, "reconfig": True},
    "tls": {"tls": {"client_auth": False}},
    "mutual_tls": {"tls": {"client_auth": True}},
    "sasl": {"sasl": {"users": {SASL_USER: SASL_PASSWORD}, "required": True}},
}
_started = {}
_lock = threading.Lock()


def server(mode: str) -> Harness:
    """The shared server of ``mode`` ("tls", "mutual_tls", "sasl" or "reconfig")."""
    with _lock:
        if mode not in _started:
            _started[mode] = Harness(**{"servers": 1, "tick_ms": 200, **_MODES[mode]})
        return _started[mode]


@atexit.register
def _close():
    for harness in _started.values():
        harness.close()
