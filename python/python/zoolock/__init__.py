"""zoolock: a correct ZooKeeper lock with kazoo's API.

Switch from kazoo by changing one import::

    from zoolock import KazooClient      # was: from kazoo.client import KazooClient

The classes, their arguments, defaults and exceptions are kazoo's; the lock
logic is zoolock's Rust core, which shares lock paths with kazoo (and
Curator) clients. Beyond kazoo: ``lock.fencing_token``, ``lock.lost`` and
``lock.add_listener`` to learn of a lost or suspended hold,
``acquire(lease=seconds)``, and asyncio (``await lock.acquire_async()``,
``async with lock:``). With kazoo installed, zoolock's exceptions are also
kazoo's (``except kazoo.exceptions.LockTimeout`` catches them).

zoolock's I/O threads do not survive ``os.fork()``: in a process forked
after zoolock started, every call raises ``ForkedError``. Start worker
processes with multiprocessing's ``"spawn"`` (or ``"forkserver"``) method.
Rust log events go to the ``logging`` logger ``"zoolock"``. For operators:
``zk.metrics()`` (the session's counters) and ``zk.inspect(path)`` (who
holds and waits on a path, as ``Participant`` objects).
"""

import functools

from . import _zoolock
from ._lease import MultiNonBlockingLease, NonBlockingLease
from ._znode import (
    AsyncResult,
    ChildrenWatch,
    DataWatch,
    Election,
    EventType,
    TransactionRequest,
    WatchedEvent,
    ZnodeAPI,
    ZnodeStat,
    fenced,
)
from ._zoolock import *  # noqa: F403 - the recipes, named in the native module's __all__
from ._zoolock import Holder, LostEvent, Participant, __version__
from .exceptions import (
    AuthFailedError,
    BadArgumentsError,
    BadVersionError,
    CancelledError,
    ConfigurationError,
    ConnectionClosedError,
    ConnectionLoss,
    ForceRetryError,
    ForkedError,
    InvalidACLError,
    KazooException,
    KazooTimeoutError,
    LockTimeout,
    NoAuthError,
    NodeExistsError,
    NoNodeError,
    NoChildrenForEphemeralsError,
    NotEmptyError,
    NotHeldError,
    OperationTimeoutError,
    RolledBackError,
    RuntimeInconsistency,
    SessionExpiredError,
    TlsError,
    ZookeeperError,
)


class KazooClient(ZnodeAPI, _zoolock.KazooClient):
    __doc__ = (_zoolock.KazooClient.__doc__ or "") + """
    kazoo's node operations (``get``, ``set``, ``create``, ``exists``,
    ``get_children``, ``delete``, ``ensure_path``, ``sync``, ``retry``,
    ``transaction()``, their ``*_async`` forms), ``DataWatch``,
    ``ChildrenWatch`` and ``Election`` work on the same session as the locks.
    A chroot in ``hosts`` that does not exist is created on the first write,
    as kazoo does; ``create_chroot=False`` (zoolock's) refuses it instead:
    ``start()`` raises ``NoNodeError``.
    """

    __module__ = "zoolock"


#: ``lock.fenced()`` (every lock and semaphore): a transaction that commits only while it holds.
setattr(Holder, "fenced", fenced)

#: ``zoolock.Client`` is ``KazooClient``.
Client = KazooClient


class _BoundToClient:
    """Read on a client, a recipe class with the client as its first argument:
    kazoo's ``self.Lock = partial(Lock, self)``, so that the client knows no
    recipe's arguments."""

    def __init__(self, recipe):
        self.recipe = recipe
        self.__doc__ = f"``{recipe.__name__}(path, ...)`` bound to this client (see ``zoolock.{recipe.__name__}``)."

    def __get__(self, client, owner=None):
        if client is None:
            return self.recipe
        bound = functools.partial(self.recipe, client)
        # Named and documented as the recipe, as a method of the client would be.
        bound.__name__, bound.__doc__ = self.recipe.__name__, self.recipe.__doc__
        return bound


for _recipe in [getattr(_zoolock, name) for name in _zoolock.__all__] + [NonBlockingLease, MultiNonBlockingLease]:
    setattr(KazooClient, _recipe.__name__, _BoundToClient(_recipe))
del _recipe


class _KazooRecipe(_BoundToClient):
    """A recipe only kazoo has, in Python, that works on a zoolock client
    (``client.SetPartitioner``): kazoo's own class, imported when first read;
    ``AttributeError`` without kazoo installed."""

    def __init__(self, module, name):
        self.module, self.name = module, name
        self.__doc__ = f"kazoo's ``{module}.{name}`` bound to this client (needs kazoo installed)."

    @property
    def recipe(self):
        import importlib

        try:
            return getattr(importlib.import_module(self.module), self.name)
        except ImportError as err:
            raise AttributeError(f"{self.name} is kazoo's own recipe: install kazoo to use it ({err})") from None


setattr(KazooClient, "SetPartitioner", _KazooRecipe("kazoo.recipe.partitioner", "SetPartitioner"))


class KazooState:
    """The states a client's listeners hear, as kazoo's ``KazooState``."""

    CONNECTED = "CONNECTED"
    #: The connection dropped; the session and its locks may still live.
    SUSPENDED = "SUSPENDED"
    #: The session ended (expired, or the client was stopped).
    LOST = "LOST"


class KeeperState:
    """The connection's states, as kazoo's ``KeeperState`` (``client_state``,
    and a one-shot watch's event on a session change)."""

    AUTH_FAILED = "AUTH_FAILED"
    CONNECTED = "CONNECTED"
    CONNECTED_RO = "CONNECTED_RO"
    CONNECTING = "CONNECTING"
    CLOSED = "CLOSED"
    EXPIRED_SESSION = "EXPIRED_SESSION"


class LockState:
    """The states of a ``Lock`` or ``Semaphore`` (``lock.state``, lock listeners)."""

    RELEASED = "RELEASED"
    HELD = "HELD"
    #: The connection dropped while holding: stop using the resource until HELD.
    SUSPENDED = "SUSPENDED"
    #: The hold is gone (``lock.lost_reason`` says why).
    LOST = "LOST"


# Literal, as mypy reads __all__ (stubtest checks it against the package):
# the native recipes (_zoolock.__all__) first, as scripts/codegen.sh writes them.
__all__ = [
    # codegen: the recipes (scripts/codegen.sh writes them, from python/src/recipe/)
    "Barrier",
    "DoubleBarrier",
    "Counter",
    "LeaderLatch",
    "Lock",
    "ReadLock",
    "WriteLock",
    "MultiLock",
    "Party",
    "ShallowParty",
    "PersistentNode",
    "Queue",
    "LockingQueue",
    "Semaphore",
    # codegen: end
    "AsyncResult",
    "AuthFailedError",
    "BadArgumentsError",
    "BadVersionError",
    "CancelledError",
    "ChildrenWatch",
    "Client",
    "ConfigurationError",
    "ConnectionClosedError",
    "ConnectionLoss",
    "DataWatch",
    "Election",
    "EventType",
    "ForceRetryError",
    "ForkedError",
    "Holder",
    "InvalidACLError",
    "KazooClient",
    "KazooException",
    "KazooState",
    "KazooTimeoutError",
    "KeeperState",
    "LockState",
    "LockTimeout",
    "LostEvent",
    "MultiNonBlockingLease",
    "NoAuthError",
    "NoChildrenForEphemeralsError",
    "NodeExistsError",
    "NonBlockingLease",
    "NoNodeError",
    "NotEmptyError",
    "NotHeldError",
    "OperationTimeoutError",
    "Participant",
    "RolledBackError",
    "RuntimeInconsistency",
    "SessionExpiredError",
    "TlsError",
    "TransactionRequest",
    "WatchedEvent",
    "ZnodeStat",
    "ZookeeperError",
    "__version__",
]
