"""Type stubs of zoolock's native module (see the docstrings for behaviour)."""

import datetime
import os
from types import TracebackType
from typing import Any, Awaitable, Callable, Dict, Iterable, Iterator, List, Literal, Optional, Sequence, Set, Tuple, Type, Union, final

from ._znode import TransactionRequest

__version__: str

# The recipe classes (their stubs are in python/src/recipe/): zoolock exports
# them and binds each to KazooClient.
__all__ = [
# codegen: the recipes' names (scripts/codegen.sh writes them)
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
]

_Acl = Tuple[int, Tuple[str, str]]
_State = str
# A PEM file name, or the PEM text itself.
_Pem = Union[str, "os.PathLike[str]"]

class KazooClient:
    """A ZooKeeper client with kazoo's interface, for locks and semaphores."""

    def __init__(
        self,
        hosts: Union[str, Sequence[str], None] = "127.0.0.1:2181",
        timeout: float = 10.0,
        client_id: Optional[Tuple[int, bytes]] = None,
        handler: None = None,
        default_acl: Optional[Iterable[_Acl]] = None,
        auth_data: Optional[Iterable[Tuple[str, str]]] = None,
        sasl_options: Optional[Dict[str, str]] = None,
        read_only: Optional[bool] = None,
        randomize_hosts: bool = True,
        connection_retry: None = None,
        command_retry: None = None,
        logger: None = None,
        keyfile: Optional[_Pem] = None,
        keyfile_password: Optional[str] = None,
        certfile: Optional[_Pem] = None,
        ca: Optional[_Pem] = None,
        use_ssl: bool = False,
        verify_certs: bool = True,
        check_hostname: bool = False,
        create_chroot: bool = True,
    ) -> None: ...
    def start(self, timeout: float = 15.0) -> None:
        """Connects, or raises KazooTimeoutError; a no-op when started."""
    def stop(self) -> None:
        """Ends the session, releasing every lock it held."""
    def close(self) -> None:
        """Same as stop() in zoolock."""
    def restart(self) -> None:
        """stop() then start()."""
    @property
    def state(self) -> _State:
        """"CONNECTED", "SUSPENDED" or "LOST" (a KazooState)."""
    @property
    def connected(self) -> bool:
        """Whether the client is connected now."""
    @property
    def client_id(self) -> Optional[Tuple[int, bytes]]:
        """(session_id, password) while connected, else None; KazooClient(client_id=...) resumes that session."""
    @property
    def hosts(self) -> List[Tuple[str, int]]:
        """kazoo's hosts: each (host, port), the chroot apart."""
    @property
    def chroot(self) -> str:
        """The connect string's chroot, "" if none."""
    @property
    def auth_data(self) -> Set[Tuple[str, str]]:
        """The (scheme, credential) pairs the session authenticates with (a copy)."""
    def set_hosts(self, hosts: Union[str, Sequence[str]], randomize_hosts: Optional[bool] = None) -> None:
        """The hosts of the next session (next start(), or after an expiry); the chroot cannot change."""
    @property
    def last_zxid(self) -> int:
        """The highest zxid of a reply the session received (watch events aside); 0 before any."""
    def add_listener(self, listener: Callable[[_State], Any]) -> None:
        """Calls listener(state) on each KazooState change; returning True removes it."""
    def remove_listener(self, listener: Callable[[_State], Any]) -> None:
        """Removes a listener."""
    def metrics(self) -> Dict[str, float]:
        """The current session's metrics, named as in Prometheus' text format (zoolock only)."""
    def inspect(self, path: str) -> List[Participant]:
        """Holders, then waiters, of the lock or semaphore at path, in queue order (zoolock only)."""
    # At run time these are the recipe classes bound to the client (kazoo's
    # partial(Lock, client), see zoolock/__init__.py); typed here as methods
    # because a checker cannot read a partial's parameters off a class attribute.
    def Lock(
        self, path: str, identifier: Any = None, extra_lock_patterns: Sequence[str] = (), *, scheme: str = "kazoo", reentrant: bool = False, mirror: bool = True
    ) -> Lock:
        """A Lock bound to this client; reentrant=True makes it reentrant per thread or asyncio task (zoolock only)."""
    def ReadLock(self, path: str, identifier: Any = None, extra_lock_patterns: Sequence[str] = (), *, scheme: str = "kazoo", mirror: bool = True) -> ReadLock:
        """A ReadLock bound to this client."""
    def WriteLock(self, path: str, identifier: Any = None, extra_lock_patterns: Sequence[str] = (), *, scheme: str = "kazoo", mirror: bool = True) -> WriteLock:
        """A WriteLock bound to this client."""
    def Semaphore(self, path: str, identifier: Any = None, max_leases: int = 1) -> Semaphore:
        """A Semaphore bound to this client."""
    def MultiLock(self, paths: Iterable[str], identifier: Any = None) -> MultiLock:
        """A MultiLock bound to this client."""
    def Counter(self, path: str, default: Union[int, float] = 0, support_curator: bool = False) -> Counter:
        """A Counter bound to this client."""
    def NonBlockingLease(self, path: str, duration: datetime.timedelta, identifier: Any = None,
                         utcnow: Callable[[], datetime.datetime] = ...) -> Any:
        """A zoolock.NonBlockingLease (one try, made now) bound to this client."""
    def MultiNonBlockingLease(self, count: int, path: str, duration: datetime.timedelta, identifier: Any = None,
                              utcnow: Callable[[], datetime.datetime] = ...) -> Any:
        """A zoolock.MultiNonBlockingLease (one try, made now) bound to this client."""
    def Barrier(self, path: str) -> Barrier:
        """A Barrier bound to this client."""
    def DoubleBarrier(self, path: str, num_clients: int, identifier: Any = None, node_name: Optional[str] = None) -> DoubleBarrier:
        """A DoubleBarrier bound to this client."""
    def PersistentNode(self, path: str, data: Optional[bytes] = None) -> PersistentNode:
        """A PersistentNode bound to this client (zoolock only: Curator's)."""
    def Party(self, path: str, identifier: Any = None) -> Party:
        """A Party bound to this client."""
    def ShallowParty(self, path: str, identifier: Any = None) -> ShallowParty:
        """A ShallowParty bound to this client."""
    def Queue(self, path: str) -> Queue:
        """A Queue bound to this client."""
    def LockingQueue(self, path: str) -> LockingQueue:
        """A LockingQueue bound to this client."""
    def SetPartitioner(self, path: str, set: Any, partition_func: Any = None, identifier: Any = None,
                       time_boundary: float = 30, max_reaction_time: float = 1, state_change_event: Any = None) -> Any:
        """kazoo's SetPartitioner bound to this client (kazoo's own class: needs kazoo installed)."""

@final
class Participant:
    """One holder or waiter on a path, as KazooClient.inspect(path) lists them."""

    @property
    def node(self) -> str:
        """The node's full path."""
    @property
    def kind(self) -> Literal["lock", "read", "write", "lease"]:
        """What its node's name says it holds or waits for."""
    @property
    def holds(self) -> bool:
        """True for a holder, False for a waiter."""
    @property
    def identifier(self) -> str:
        """The node's data (kazoo's identifier)."""
    @property
    def session_id(self) -> int:
        """The owning session (the node's ephemeralOwner; 0 for a persistent node)."""
    @property
    def scheme(self) -> Literal["kazoo", "curator", "distributedlock", "other"]:
        """Whose naming the node follows (zoolock's default is kazoo's)."""
    @property
    def created(self) -> datetime.datetime:
        """When the node was created by the server's clock (its ctime), in UTC."""
    @property
    def fencing_token(self) -> int:
        """The node's czxid: the holder's fencing token."""

@final
class LostEvent:
    """Set once the current hold is lost; like a read-only threading.Event."""

    def is_set(self) -> bool:
        """Whether the last hold was lost (not released)."""
    def wait(self, timeout: Optional[float] = None) -> bool:
        """Waits until the hold ends: True if lost, False if released or timed out."""
    def wait_async(self, timeout: Optional[float] = None) -> Awaitable[bool]:
        """wait() for asyncio."""

class Holder:
    """What a lock and a semaphore share (zoolock's base class; each recipe has its own acquire)."""

    def release(self) -> bool:
        """True if this object held; a reentrant lock counts down, RuntimeError if another owner holds it."""
    def release_async(self) -> Awaitable[bool]:
        """release() for asyncio."""
    def cancel(self) -> None:
        """Pending acquires raise CancelledError."""
    @property
    def is_acquired(self) -> bool:
        """Whether this object holds now."""
    @property
    def state(self) -> str:
        """"RELEASED", "HELD", "SUSPENDED" or "LOST"."""
    @property
    def lost_reason(self) -> Optional[str]:
        """"SESSION_EXPIRED", "SESSION_CLOSED", "LEASE_EXPIRED" or "NODE_DELETED" when LOST."""
    @property
    def lost(self) -> LostEvent:
        """Set when the current hold is lost."""
    @property
    def path(self) -> str:
        """The lock path (a semaphore's path)."""
    @property
    def identifier(self) -> str:
        """The node data."""
    def add_listener(self, listener: Callable[[str], Any]) -> None:
        """Calls listener(state) with each new state."""
    def remove_listener(self, listener: Callable[[str], Any]) -> None:
        """Removes a listener."""
    def fenced(self) -> "TransactionRequest":
        """A transaction that commits only while this holds (else NotHeldError, nothing written)."""
    def __enter__(self) -> None: ...
    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> bool: ...
    def __aenter__(self) -> Awaitable[bool]: ...
    def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> Awaitable[bool]: ...

@final
class Election:
    """The core's election, under zoolock.Election's kazoo signatures."""

    def __init__(self, client: KazooClient, path: str, identifier: Any = None) -> None: ...
    def run(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        """Waits to lead, calls func, resigns; None also when cancelled."""
    def cancel(self) -> None: ...
    def contenders(self) -> List[str]: ...
    def term_fence(self) -> TermFence:
        """The fence of the term run leads now (for TransactionRequest)."""
    @property
    def lock(self) -> Lock:
        """The Lock the candidacy holds while it leads."""

@final
class TermFence:
    """One term's fence: a transaction's commit requires that term."""

def _try_lease(client: KazooClient, path: str, duration: float, identifier: str, now: float, count: Optional[int] = None) -> bool:
    """The core's lease try behind zoolock.NonBlockingLease (seconds; now since the epoch, UTC)."""

# codegen: the recipes' classes, from the stubs in python/src/recipe/ (scripts/codegen.sh writes them)

@final
class Barrier:
    """kazoo's Barrier: up while the node at path exists."""

    def __init__(self, client: KazooClient, path: str) -> None: ...
    def create(self) -> None:
        """Puts the barrier up."""
    def remove(self) -> bool:
        """Takes it down; True if its node was there."""
    def wait(self, timeout: Optional[float] = None) -> bool:
        """True once the barrier is down; False if timeout (seconds) ran out."""
    @property
    def path(self) -> str: ...
    @property
    def client(self) -> KazooClient: ...

@final
class DoubleBarrier:
    """kazoo's DoubleBarrier: enter waits for num_clients members, leave for all to leave."""

    def __init__(
        self, client: KazooClient, path: str, num_clients: int, identifier: Any = None, node_name: Optional[str] = None
    ) -> None: ...
    def enter(self) -> None:
        """Returns once num_clients members are in (as kazoo's, a failure does not raise: participating is False)."""
    def leave(self) -> None:
        """Returns once every member left."""
    @property
    def participating(self) -> bool: ...
    @property
    def path(self) -> str: ...
    @property
    def num_clients(self) -> int: ...
    @property
    def identifier(self) -> str: ...
    @property
    def node_name(self) -> str: ...
    @property
    def create_path(self) -> str: ...
    @property
    def client(self) -> KazooClient: ...

@final
class Counter:
    """kazoo's Counter: a number kept as one node's data, shared with kazoo's Counter on the path.
    A change whose reply was lost is never made twice: if it cannot tell, ConnectionLoss."""

    def __init__(self, client: KazooClient, path: str, default: Union[int, float] = 0, support_curator: bool = False) -> None: ...
    @property
    def value(self) -> Union[int, float]:
        """The value now (creates the node, empty = default, if missing)."""
    def compare_and_set(self, expected: Union[int, float], new: Union[int, float]) -> bool:
        """Sets the value to new if it is expected now (Curator's compareAndSet): True if set,
        False (nothing changed) if it was another; both of default's type, else TypeError."""
    def __add__(self, value: Union[int, float]) -> Counter:
        """Adds value (of default's type, else TypeError); sets pre_value and post_value."""
    def __sub__(self, value: Union[int, float]) -> Counter:
        """Subtracts value, as __add__."""
    @property
    def pre_value(self) -> Optional[Union[int, float]]:
        """The value the last change read."""
    @property
    def post_value(self) -> Optional[Union[int, float]]:
        """The value the last change wrote."""
    @property
    def path(self) -> str: ...
    @property
    def default(self) -> Union[int, float]: ...
    @property
    def default_type(self) -> type: ...
    @property
    def support_curator(self) -> bool: ...

@final
class LeaderLatch:
    """Curator's LeaderLatch: a candidate that stays in the election at path from start() to close()."""

    def __init__(self, client: KazooClient, path: str, identifier: Any = None) -> None: ...
    def start(self) -> None:
        """Joins the election and returns; leads whenever it can until close()."""
    def wait(self, timeout: Optional[float] = None) -> bool:
        """True once this candidate leads; False if timeout (seconds) ran out."""
    def close(self) -> None:
        """Leaves the election: its term or candidacy ends and its node is deleted."""
    @property
    def has_leadership(self) -> bool: ...
    @property
    def fencing_token(self) -> Optional[int]: ...
    @property
    def path(self) -> str: ...
    @property
    def client(self) -> KazooClient: ...
    def __enter__(self) -> LeaderLatch: ...
    def __exit__(self, *exc: object) -> bool: ...

class Lock(Holder):
    """A distributed lock with kazoo's interface and node names.

    reentrant=True (zoolock only): the owner — the asyncio task that calls, else the calling thread —
    re-acquires at once, each release counts down and the last deletes the node; another owner's
    acquire waits, its release raises RuntimeError; a loss ends the hold whatever the count."""

    def __init__(
        self,
        client: KazooClient,
        path: str,
        identifier: Any = None,
        extra_lock_patterns: Sequence[str] = (),
        *,
        scheme: str = "kazoo",
        reentrant: bool = False,
        mirror: bool = True,
    ) -> None: ...
    def acquire(self, blocking: bool = True, timeout: Optional[float] = None, ephemeral: bool = True, *, lease: Optional[float] = None) -> bool:
        """True once held; False for a failed non-blocking try; LockTimeout when the timeout runs out
        behind others; False when it runs out because this object held the lock all along (kazoo)."""
    def acquire_async(
        self, blocking: bool = True, timeout: Optional[float] = None, ephemeral: bool = True, *, lease: Optional[float] = None
    ) -> Awaitable[bool]:
        """acquire() for asyncio."""
    def contenders(self) -> List[str]:
        """Identifiers of every contender, holder first."""
    @property
    def node(self) -> Optional[str]:
        """The holding node's name (without the path)."""
    @property
    def fencing_token(self) -> Optional[int]:
        """Strictly increasing from holder to holder; None when not held."""

@final
class ReadLock(Lock):
    """Shared with other readers; excludes writers."""

    def __init__(
        self, client: KazooClient, path: str, identifier: Any = None, extra_lock_patterns: Sequence[str] = (), *, scheme: str = "kazoo", mirror: bool = True
    ) -> None: ...

@final
class WriteLock(Lock):
    """Exclusive; waits for every earlier reader and writer."""

    def __init__(
        self, client: KazooClient, path: str, identifier: Any = None, extra_lock_patterns: Sequence[str] = (), *, scheme: str = "kazoo", mirror: bool = True
    ) -> None: ...

@final
class MultiLock(Holder):
    """All of several kazoo Locks or none (zoolock's; kazoo has none): taken in sorted order, so two
    multi-locks never deadlock; released together; lost when any path's node is."""

    def __init__(self, client: KazooClient, paths: Iterable[str], identifier: Any = None) -> None: ...
    def acquire(self, blocking: bool = True, timeout: Optional[float] = None, *, lease: Optional[float] = None) -> bool:
        """True once every path is held; False for a failed non-blocking try; LockTimeout on timeout.
        Whatever ends it early leaves no node on any path."""
    def acquire_async(self, blocking: bool = True, timeout: Optional[float] = None, *, lease: Optional[float] = None) -> Awaitable[bool]:
        """acquire() for asyncio."""
    @property
    def paths(self) -> List[str]:
        """The paths in the order taken (sorted, each once)."""
    @property
    def fencing_tokens(self) -> Dict[str, int]:
        """{path: fencing token} while held, in the order taken; {} when not."""

class Party:
    """kazoo's Party: members are <uuid4 hex>__party__ nodes holding their identifiers."""

    def __init__(self, client: KazooClient, path: str, identifier: Any = None) -> None: ...
    def join(self) -> None:
        """Joins; a member whose session expires joins again on the next one until it leaves."""
    def leave(self) -> bool:
        """Leaves; True if this member's node was there."""
    def __iter__(self) -> Iterator[str]:
        """The members' identifiers."""
    def __len__(self) -> int: ...
    @property
    def participating(self) -> bool: ...
    @property
    def path(self) -> str: ...
    @property
    def data(self) -> bytes: ...
    @property
    def node(self) -> Optional[str]: ...
    @property
    def create_path(self) -> Optional[str]: ...
    @property
    def client(self) -> KazooClient: ...

@final
class ShallowParty(Party):
    """kazoo's ShallowParty: the identifier is in the node's name, <uuid4 hex>-<identifier>."""

    def __init__(self, client: KazooClient, path: str, identifier: Any = None) -> None: ...

@final
class PersistentNode:
    """Curator's PersistentNode (ephemeral): a node kept at path while started, made again after an expiry or a deletion."""

    def __init__(self, client: KazooClient, path: str, data: Optional[bytes] = None) -> None: ...
    def start(self) -> None:
        """Makes the node and keeps it; returns once it is this session's (another session's node is waited out)."""
    def set_data(self, data: bytes) -> None:
        """Changes the node's data, and what it is made with from now on."""
    def close(self) -> bool:
        """Stops keeping the node and deletes it; True if it was this session's."""
    @property
    def data(self) -> bytes: ...
    @property
    def is_started(self) -> bool: ...
    @property
    def path(self) -> str: ...
    @property
    def client(self) -> KazooClient: ...
    def __enter__(self) -> PersistentNode: ...
    def __exit__(self, *exc: object) -> bool: ...

@final
class Queue:
    """kazoo's Queue: entry-<priority>-<sequence> nodes, removed as they are taken (at most once)."""

    def __init__(self, client: KazooClient, path: str) -> None: ...
    def put(self, value: bytes, priority: int = 100) -> None:
        """Adds value; priority 0 to 999, lower first."""
    def get(self) -> Optional[bytes]:
        """Takes the first entry's value; None if empty (does not wait)."""
    def __len__(self) -> int: ...
    @property
    def path(self) -> str: ...
    @property
    def client(self) -> KazooClient: ...

@final
class LockingQueue:
    """kazoo's LockingQueue: get locks an entry, consume removes it, release gives it back (at least once)."""

    def __init__(self, client: KazooClient, path: str) -> None: ...
    def put(self, value: bytes, priority: int = 100) -> None:
        """Adds value; priority 0 to 999, lower first."""
    def put_all(self, values: List[bytes], priority: int = 100) -> None:
        """Adds every value, all or none."""
    def get(self, timeout: Optional[float] = None) -> Optional[bytes]:
        """Locks the first free entry and returns its value (the same one until consumed or released); None on timeout."""
    def consume(self) -> bool:
        """Removes the entry got; False if this consumer holds none (or lost its lock)."""
    def release(self) -> bool:
        """Gives the entry got back; False if this consumer holds none."""
    def holds_lock(self) -> bool:
        """Whether this consumer still holds the entry's lock."""
    def __len__(self) -> int: ...
    @property
    def processing_element(self) -> Optional[Tuple[str, bytes]]: ...
    @property
    def id(self) -> Optional[bytes]: ...
    @property
    def path(self) -> str: ...
    @property
    def client(self) -> KazooClient: ...

@final
class Semaphore(Holder):
    """A counting semaphore in kazoo's layout."""

    def __init__(self, client: KazooClient, path: str, identifier: Any = None, max_leases: int = 1) -> None: ...
    def acquire(self, blocking: bool = True, timeout: Optional[float] = None, *, lease: Optional[float] = None) -> bool:
        """True once a lease is held (at once if this object holds one: kazoo); False for a failed
        non-blocking try; LockTimeout on timeout."""
    def acquire_async(self, blocking: bool = True, timeout: Optional[float] = None, *, lease: Optional[float] = None) -> Awaitable[bool]:
        """acquire() for asyncio."""
    def lease_holders(self) -> List[str]:
        """Identifiers of the current lease holders."""
    @property
    def max_leases(self) -> int:
        """How many holders at once."""

# codegen: end
