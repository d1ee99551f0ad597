"""kazoo's leases over the core's (``zoolock._zoolock._try_lease``): the same
arguments, attributes and ``lease_holder`` record, so kazoo and zoolock
clients share one lease."""

import datetime
import socket

from . import _zoolock

_EPOCH = datetime.datetime(1970, 1, 1)


def _args(duration, identifier, utcnow):
    # kazoo's default: the host's name, so every process of a host renews one lease.
    identifier = identifier or socket.gethostname()
    seconds = duration.total_seconds() if isinstance(duration, datetime.timedelta) else float(duration)
    # kazoo's utcnow() is a naive datetime in UTC.
    now = (utcnow() - _EPOCH).total_seconds()
    return seconds, str(identifier), now


class NonBlockingLease:
    """kazoo's ``NonBlockingLease(client, path, duration, identifier=None,
    utcnow=datetime.datetime.utcnow)``: one try, made by the constructor, at
    a lease on ``path`` until ``utcnow() + duration``; true if obtained (or
    renewed: the same identifier may take it again before its end). The end
    is wall-clock time: clients whose clocks disagree may both hold it."""

    def __init__(self, client, path, duration, identifier=None, utcnow=datetime.datetime.utcnow):
        seconds, ident, now = _args(duration, identifier, utcnow)
        self.path = path
        self.duration = duration
        self.identifier = ident
        self.obtained = _zoolock._try_lease(client, path, seconds, ident, now)

    def __bool__(self):
        return self.obtained

    __nonzero__ = __bool__


class MultiNonBlockingLease:
    """kazoo's ``MultiNonBlockingLease(client, count, path, duration,
    identifier=None, utcnow=datetime.datetime.utcnow)``: up to ``count``
    holders at once, trying ``path/0`` … ``path/<count - 1>`` in turn."""

    def __init__(self, client, count, path, duration, identifier=None, utcnow=datetime.datetime.utcnow):
        seconds, ident, now = _args(duration, identifier, utcnow)
        self.obtained = _zoolock._try_lease(client, path, seconds, ident, now, count)

    def __bool__(self):
        return self.obtained

    __nonzero__ = __bool__
