"""kazoo's ``kazoo.exceptions`` names, with kazoo's hierarchy.

The native module raises these classes (``import_exception!`` in
``python/src/errors.rs``). When kazoo is importable, each class also derives
from kazoo's class of the same name, so code written for kazoo keeps catching
what zoolock raises: ``except kazoo.exceptions.LockTimeout`` catches
``zoolock.LockTimeout``, and ``except zoolock.LockTimeout`` works either way.
zoolock does not depend on kazoo: without it the hierarchy is zoolock's alone.
"""

try:
    from kazoo import exceptions as _kazoo_exceptions
    from kazoo import retry as _kazoo_retry
    from kazoo.handlers import threading as _kazoo_threading
except ImportError:
    _kazoo_exceptions = _kazoo_retry = _kazoo_threading = None


def _kazoos(name, module=_kazoo_exceptions):
    """kazoo's class of that name as a one-element tuple of bases, or ``()``.

    kazoo's class comes first: putting it after zoolock's parent would ask
    for an impossible method order at the root (``Exception`` ahead of
    kazoo's ``KazooException``, which derives from it).
    """
    theirs = getattr(module, name, None)
    return (theirs,) if isinstance(theirs, type) and issubclass(theirs, BaseException) else ()


class KazooException(*_kazoos("KazooException"), Exception):
    """Base of every zoolock (and kazoo) error."""


class ZookeeperError(*_kazoos("ZookeeperError"), KazooException):
    """An error the ZooKeeper server reported."""


class ConnectionLoss(*_kazoos("ConnectionLoss"), ZookeeperError):
    """ZooKeeper did not answer: the connection is down."""


class NoNodeError(*_kazoos("NoNodeError"), ZookeeperError):
    """A node (e.g. the chroot, or a lock path's parent) does not exist."""


class NodeExistsError(*_kazoos("NodeExistsError"), ZookeeperError):
    """A node already exists."""


class BadVersionError(*_kazoos("BadVersionError"), ZookeeperError):
    """A node changed since it was read: its version is another."""


class NotEmptyError(*_kazoos("NotEmptyError"), ZookeeperError):
    """A node to delete has children."""


class NoChildrenForEphemeralsError(*_kazoos("NoChildrenForEphemeralsError"), ZookeeperError):
    """An ephemeral node cannot have children."""


class BadArgumentsError(*_kazoos("BadArgumentsError"), ZookeeperError):
    """A bad path or argument, refused before anything was sent, where
    kazoo's server would refuse it. Not a ``ValueError``, as in kazoo: a
    program that catches ``ValueError`` for its own bad input does not catch
    it."""


class RolledBackError(*_kazoos("RolledBackError"), ZookeeperError):
    """In a failed transaction's results: this operation was fine, but the
    transaction as a whole was not made."""


class RuntimeInconsistency(*_kazoos("RuntimeInconsistency"), ZookeeperError):
    """In a failed transaction's results: this operation came after the one
    that failed, and was not tried."""


class InvalidACLError(*_kazoos("InvalidACLError"), ZookeeperError):
    """The server refused an ACL (an unknown scheme, a malformed id)."""


class NoAuthError(*_kazoos("NoAuthError"), ZookeeperError):
    """Not authorized: the node's ACL refuses this client."""


class AuthFailedError(*_kazoos("AuthFailedError"), ZookeeperError):
    """Authentication with ZooKeeper failed."""


class SessionExpiredError(*_kazoos("SessionExpiredError"), ZookeeperError):
    """The ZooKeeper session expired."""


class ConnectionClosedError(*_kazoos("ConnectionClosedError"), SessionExpiredError):
    """The client was never started, or was stopped or closed."""


class OperationTimeoutError(*_kazoos("OperationTimeoutError"), ZookeeperError):
    """An operation ran out of time; ``retry()`` calls again, as kazoo's."""


class ForceRetryError(*_kazoos("ForceRetryError", _kazoo_retry), Exception):
    """Raised by a function given to ``retry()`` to be called again (kazoo's
    ``kazoo.retry.ForceRetryError``, which kazoo's recipes raise after losing
    a race, e.g. ``Counter``'s compare-and-set): not a ``KazooException``, as
    kazoo's is not."""


class CancelledError(*_kazoos("CancelledError"), KazooException):
    """The acquire was cancelled by cancel()."""


class LockTimeout(*_kazoos("LockTimeout"), KazooException):
    """A blocking acquire with a timeout ran out of time."""


class ConfigurationError(*_kazoos("ConfigurationError"), KazooException):
    """The client is configured in a way zoolock refuses."""


class NotHeldError(KazooException):
    """A fenced write (``lock.fenced()``) by a handle that does not hold, or
    whose node was gone when the write reached the server: nothing of it was
    made. kazoo has no fenced writes, hence no name for this; it derives from
    ``KazooException`` (kazoo's, with kazoo installed) so that code catching
    kazoo's base class catches it too."""


class ForkedError(KazooException):
    """zoolock was started in a parent process; its threads do not survive fork().
    Use zoolock in processes started fresh (multiprocessing's 'spawn' start method)."""


class KazooTimeoutError(*_kazoos("KazooTimeoutError", _kazoo_threading), Exception):
    """start() could not connect in time (like kazoo's, not a KazooException)."""


class TlsError(KazooTimeoutError):
    """start() could not connect over TLS, and the message says why: a server
    certificate ``ca`` does not vouch for or that does not name the host, a
    client certificate the server refuses (or none where it wants one), a
    wrong ``keyfile_password``, plaintext and TLS ports swapped, or
    ``verify_certs=False``. A ``KazooTimeoutError``, as kazoo's start() raises
    in its place."""


# ---- kazoo's other names -------------------------------------------------
# Errors zoolock never raises (server errors a lock cannot meet, kazoo's
# connection's own), with kazoo's names and bases, so that code naming them
# runs unchanged; and kazoo's ``...Exception`` aliases.

#: (name, base) of each, in kazoo's hierarchy.
_NEVER_RAISED = (
    ("ZookeeperStoppedError", KazooException),
    ("ConnectionDropped", KazooException),
    ("WriterNotClosedException", KazooException),
    ("SASLException", KazooException),
    ("SystemZookeeperError", ZookeeperError),
    ("DataInconsistency", ZookeeperError),
    ("MarshallingError", ZookeeperError),
    ("UnimplementedError", ZookeeperError),
    ("UnknownSessionError", ZookeeperError),
    ("NewConfigNoQuorumError", ZookeeperError),
    ("ReconfigInProcessError", ZookeeperError),
    ("APIError", ZookeeperError),
    ("InvalidCallbackError", ZookeeperError),
    ("SessionMovedError", ZookeeperError),
    ("NotReadOnlyCallError", ZookeeperError),
    ("EphemeralOnLocalSessionError", ZookeeperError),
    ("NoWatcherError", ZookeeperError),
    ("RequestTimeoutError", ZookeeperError),
    ("ReconfigDisabledError", ZookeeperError),
    ("SessionClosedRequireSaslError", ZookeeperError),
    ("QuotaExceededError", ZookeeperError),
    ("ThrottledOpError", ZookeeperError),
)
for _name, _base in _NEVER_RAISED:
    globals()[_name] = type(_name, (*_kazoos(_name), _base), {"__module__": __name__, "__doc__": f"kazoo's {_name}."})
del _name, _base

ConnectionLossException = ConnectionLoss
MarshallingErrorException = MarshallingError  # noqa: F821 - made above
SystemErrorException = SystemZookeeperError  # noqa: F821
RuntimeInconsistencyException = RuntimeInconsistency
DataInconsistencyException = DataInconsistency  # noqa: F821
UnimplementedException = UnimplementedError  # noqa: F821
OperationTimeoutException = OperationTimeoutError
BadArgumentsException = BadArgumentsError
ApiErrorException = APIError  # noqa: F821
NoNodeException = NoNodeError
NoAuthException = NoAuthError
BadVersionException = BadVersionError
NoChildrenForEphemeralsException = NoChildrenForEphemeralsError
NodeExistsException = NodeExistsError
InvalidACLException = InvalidACLError
AuthFailedException = AuthFailedError
NotEmptyException = NotEmptyError
SessionExpiredException = SessionExpiredError
InvalidCallbackException = InvalidCallbackError  # noqa: F821

#: What ``retry()`` calls again after, at growing intervals as kazoo's
#: ``KazooRetry`` does: zoolock's classes and kazoo's, which they derive from.
_RETRY_AFTER_BACKOFF = (
    ForceRetryError,
    OperationTimeoutError,
    *_kazoos("ForceRetryError", _kazoo_retry),
    *_kazoos("OperationTimeoutError"),
)

__all__ = [
    "InvalidACLError",
    "RuntimeInconsistency",
    "RolledBackError",
    "NotHeldError",
    "NoChildrenForEphemeralsError",
    "BadArgumentsError",
    "AuthFailedError",
    "BadVersionError",
    "CancelledError",
    "ConfigurationError",
    "ConnectionClosedError",
    "ConnectionLoss",
    "ForceRetryError",
    "ForkedError",
    "KazooException",
    "KazooTimeoutError",
    "LockTimeout",
    "NoAuthError",
    "NodeExistsError",
    "NoNodeError",
    "NotEmptyError",
    "OperationTimeoutError",
    "SessionExpiredError",
    "TlsError",
    "ZookeeperError",
]
