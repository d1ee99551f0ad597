"""kazoo's znode API on zoolock's ``KazooClient``: ``get``, ``set``,
``create``, ``exists``, ``get_children``, ``delete``, ``ensure_path``,
``sync``, ``retry``, ``transaction()``, ``DataWatch``, ``ChildrenWatch``,
``Election`` and their ``*_async`` forms.

This layer only translates: kazoo's argument checks (``TypeError`` where
kazoo raises it), its path normalisation, return types (``ZnodeStat``,
``WatchedEvent``, ``IAsyncResult``-like results) and result shapes. The
operations, watches, transactions and retries are the core's
(``python/src/znode.rs`` calls them).
"""

import collections
import inspect
import logging
import queue
import random
import sys
import threading
import time
import weakref
from collections import namedtuple

from . import _zoolock
from .exceptions import (
    _RETRY_AFTER_BACKOFF,
    CancelledError,
    ConnectionLoss,
    KazooException,
    NoNodeError,
    RolledBackError,
    RuntimeInconsistency,
)
from .security import ACL, Id

#: kazoo's ``KazooRetry`` pauses: 0.1 s, doubling, ±40%, at most a minute.
_BACKOFF_FIRST, _BACKOFF_MAX, _BACKOFF_JITTER = 0.1, 60.0, 0.4


class ZnodeStat(namedtuple("ZnodeStat", "czxid mzxid ctime mtime version cversion aversion "
                                        "ephemeralOwner dataLength numChildren pzxid")):
    """A node's metadata, as kazoo's ``ZnodeStat`` (same fields, same properties)."""

    __slots__ = ()

    @property
    def acl_version(self):
        """``aversion``: changes to the node's ACL."""
        return self.aversion

    @property
    def children_version(self):
        """``cversion``: changes to the node's children."""
        return self.cversion

    @property
    def created(self):
        """Creation time, seconds since the epoch."""
        return self.ctime / 1000.0

    @property
    def last_modified(self):
        """Last data change, seconds since the epoch."""
        return self.mtime / 1000.0

    @property
    def owner_session_id(self):
        """The session owning an ephemeral node; ``None`` for a persistent one."""
        return self.ephemeralOwner or None

    @property
    def creation_transaction_id(self):
        """``czxid``: the transaction that created the node."""
        return self.czxid

    @property
    def last_modified_transaction_id(self):
        """``mzxid``: the transaction that last changed its data."""
        return self.mzxid

    @property
    def data_length(self):
        """``dataLength``: the length of its data."""
        return self.dataLength

    @property
    def children_count(self):
        """``numChildren``: how many children it has."""
        return self.numChildren


class EventType:
    """kazoo's ``EventType``: what a ``WatchedEvent`` reports."""

    CREATED = "CREATED"
    DELETED = "DELETED"
    CHANGED = "CHANGED"
    CHILD = "CHILD"
    NONE = "NONE"


#: kazoo's ``WatchedEvent(type, state, path)``.
WatchedEvent = namedtuple("WatchedEvent", "type state path")


def _event(raw):
    return None if raw is None else WatchedEvent(raw[0], "CONNECTED", raw[1])


def _stat(raw):
    return None if raw is None else ZnodeStat(*raw)


def _read(answer):
    data, stat = answer
    return data, ZnodeStat(*stat)


def _true(_):
    return True


# ---- kazoo's argument checks --------------------------------------------


def _path(path, trailing=False):
    """kazoo's path handling: a ``str``; relative paths are taken from the
    root and empty components dropped (``"a//b/"`` is ``"/a/b"``); ``.`` and
    ``..`` are kazoo's ``ValueError``; the core refuses what is still bad
    (control characters, ``/zookeeper``) with ``BadArgumentsError``, as the
    server does in kazoo."""
    if not isinstance(path, str):
        raise TypeError("Invalid type for 'path' (string expected)")
    parts = [p for p in path.split("/") if p]
    if "." in parts or ".." in parts:
        raise ValueError("relative paths not allowed")
    normal = "/" + "/".join(parts)
    if not normal.isascii():
        _zoolock._refuse_non_utf8_path(normal)
    if trailing and path.endswith("/") and normal != "/":
        normal += "/"
    return normal


def _value(value):
    """Node data: bytes, or ``None`` for ZooKeeper's null (which ``get`` returns as ``None``)."""
    if value is not None and not isinstance(value, bytes):
        raise TypeError("Invalid type for 'value' (must be a byte string)")
    return value


def _bool(value, name):
    if not isinstance(value, bool):
        raise TypeError(f"Invalid type for '{name}' (bool expected)")
    return value


def _int(value, name):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"Invalid type for '{name}' (int expected)")
    return value


def _watch(watch):
    if watch is not None and not callable(watch):
        raise TypeError("Invalid type for 'watch' (must be a callable)")
    return watch


def _acl(acl):
    """kazoo ACLs (``(perms, (scheme, id))``) as ``(perms, scheme, id)``; an
    empty list or ``None`` is the client's ``default_acl``."""
    if not acl:
        return None
    if not isinstance(acl, (list, tuple)) or (len(acl) == 2 and isinstance(acl[0], int)):
        raise TypeError("Invalid type for 'acl' (acl must be a tuple/list of ACL's")
    triples = []
    for entry in acl:
        try:
            perms, (scheme, ident) = entry
        except (TypeError, ValueError):
            raise TypeError("Invalid type for 'acl' (an ACL is (perms, Id(scheme, id)))") from None
        triples.append((_int(perms, "acl"), str(scheme), str(ident)))
    return triples


# ---- kazoo's IAsyncResult ---------------------------------------------------


class AsyncResult:
    """kazoo's ``IAsyncResult``: the outcome of a ``*_async`` call."""

    def __init__(self):
        self._done = threading.Condition()
        self._set = False
        self.value = None
        self.exception = None
        self._callbacks = []

    def ready(self):
        """Whether the result is set."""
        return self._set

    def successful(self):
        """Whether it is set, with a value rather than an exception."""
        return self._set and self.exception is None

    def set(self, value=None):
        """Sets the value and calls the linked callbacks."""
        self._finish(value, None)

    def set_exception(self, exception):
        """Sets the exception and calls the linked callbacks."""
        self._finish(None, exception)

    def _finish(self, value, exception, dispatch=False):
        with self._done:
            self.value, self.exception, self._set = value, exception, True
            callbacks, self._callbacks = self._callbacks, []
            self._done.notify_all()
        for callback in callbacks:
            if dispatch:
                _dispatch(lambda callback=callback: callback(self))
            else:
                callback(self)

    def _complete(self, ok, value, then, failed):
        """A started core call's outcome (``done`` of ``_core_call``), on the
        results thread: its value through ``then``, or its exception."""
        if ok:
            try:
                value = then(value)
            except BaseException as err:  # noqa: B036 - handed to the caller's result
                ok, value = False, err
        elif failed is not None:
            failed()
        # The callbacks go to the callback thread, so that one may wait for
        # another result (kazoo's completion queue); set() by others calls
        # them at once.
        if ok:
            self._finish(value, None, True)
        else:
            self._finish(None, value, True)

    def wait(self, timeout=None):
        """Waits until set, at most ``timeout`` seconds; whether it is set."""
        with self._done:
            self._done.wait_for(lambda: self._set, timeout)
        return self._set

    def get(self, block=True, timeout=None):
        """The value, or raises the exception; ``KazooTimeoutError`` if not
        ready within ``timeout`` (at once when ``block`` is false)."""
        if not self.wait(timeout if block else 0):
            from .exceptions import KazooTimeoutError

            raise KazooTimeoutError("the result is not ready")
        if self.exception is not None:
            raise self.exception
        return self.value

    def get_nowait(self):
        """``get(block=False)``."""
        return self.get(block=False)

    def rawlink(self, callback):
        """Calls ``callback(self)`` once the result is set (at once if it is)."""
        with self._done:
            if not self._set:
                self._callbacks.append(callback)
                return
        callback(self)

    def unlink(self, callback):
        """Removes a callback added with ``rawlink``."""
        with self._done:
            if callback in self._callbacks:
                self._callbacks.remove(callback)


_jobs = queue.SimpleQueue()
_worker_lock = threading.Lock()
_worker = None


def _run_jobs():
    while True:
        call = _jobs.get()
        try:
            call()
        except Exception:  # nowhere to raise it to, as kazoo's callback thread
            sys.excepthook(*sys.exc_info())
        # Waiting for the next job it keeps nothing of this one.
        call = None


def _dispatch(call):
    """Runs ``call`` on the callback thread, in the order dispatched (kazoo's
    callback queue): an ``AsyncResult``'s linked callbacks and the
    handler's ``dispatch_callback``. What it raises is reported."""
    global _worker
    with _worker_lock:
        if _worker is None or not _worker.is_alive():
            _worker = threading.Thread(target=_run_jobs, name="zoolock-callbacks", daemon=True)
            _worker.start()
    _jobs.put(call)


#: The ``AsyncResult`` of the ``*_async`` call being started on this thread
#: (``KazooClient._async``), taken by its one core call (``_core_call``).
_starting = threading.local()


class Handler:
    """What kazoo code reaches through ``client.handler``: threading's
    events, locks and kazoo-like async results (zoolock has no pluggable
    handler; its I/O runs on its own threads)."""

    name = "zoolock"
    timeout_exception = None
    sleep_func = staticmethod(__import__("time").sleep)

    @staticmethod
    def event_object():
        """A ``threading.Event``."""
        return threading.Event()

    @staticmethod
    def lock_object():
        """A ``threading.Lock``."""
        return threading.Lock()

    @staticmethod
    def rlock_object():
        """A ``threading.RLock``."""
        return threading.RLock()

    @staticmethod
    def condition_object():
        """A ``threading.Condition``."""
        return threading.Condition()

    @staticmethod
    def async_result():
        """An ``AsyncResult``."""
        return AsyncResult()

    @staticmethod
    def spawn(func, *args, **kwargs):
        """Runs ``func`` on a new daemon thread."""
        thread = threading.Thread(target=func, args=args, kwargs=kwargs, daemon=True)
        thread.start()
        return thread

    #: kazoo's recipes make their work queues with these (TreeCache).
    queue_impl = queue.Queue
    queue_empty = queue.Empty

    @property
    def running(self):
        """Always ``True``: zoolock's threads run while the process does."""
        return True

    def start(self):
        """Nothing to start (kazoo's starts its callback threads)."""

    def stop(self):
        """Nothing to stop: zoolock's threads are not the handler's."""

    @staticmethod
    def dispatch_callback(callback):
        """Runs kazoo's ``Callback`` (``callback.func(*callback.args)``) on
        one thread, in the order dispatched, as kazoo's callback queue."""
        _dispatch(lambda: callback.func(*callback.args))


from .exceptions import KazooTimeoutError as _KazooTimeoutError  # noqa: E402

Handler.timeout_exception = _KazooTimeoutError
_HANDLER = Handler()


# ---- one-shot watches (kazoo's watch=) --------------------------------------


def _with_chroot(chroot, path):
    """kazoo's ``_prefix_root``: the server's path of ``path`` under ``chroot``."""
    if not chroot:
        return path
    return chroot.rstrip("/") + "/" + path.lstrip("/") if path != "/" else chroot


class _WatchFuncs(set):
    """One path's watch functions (kazoo's ``_data_watchers[path]``). A
    function its owner takes out (kazoo's TreeCache does on close) is not
    called, and its pending watches let go of it, as kazoo's do: what it
    references is freed though the server's watch is still set."""

    def __init__(self, *funcs):
        super().__init__(*funcs)
        #: The pending ``_OneShot`` watches of each function.
        self.shots = {}

    def discard(self, func):
        super().discard(func)
        self._let_go(func)

    def remove(self, func):
        super().remove(func)
        self._let_go(func)

    def clear(self):
        funcs = list(self)
        super().clear()
        for func in funcs:
            self._let_go(func)

    def _let_go(self, func):
        for shot in self.shots.pop(func, ()):
            shot._let_go()


class _OneShot:
    """kazoo's one-time ``watch=`` of ``get``, ``exists`` and ``get_children``:
    ``func(WatchedEvent)`` once, at the first change after the read, set by
    the read's own request; on the session's watch thread, in the order the
    server sent the events (kazoo's TreeCache hears a child's deletion
    before its parent's)."""

    def __init__(self, client, func):
        self.client, self.func = client, func
        #: Fired, let go, or its read failed (under ``_kept_lock``).
        self.fired = False
        #: The read returned and ``func`` went into the client's set.
        self.returned = False
        self.watch = None
        #: The client's set of watch functions for this path (kazoo's
        #: ``_data_watchers[path]``): its owner may take ``func`` out of it
        #: (TreeCache does on close), and then it is not called.
        self.registered = None

    def read(self, watchers, path, start, then):
        """``start(client, path, callback)``: the core's read with its watch,
        ``(value, watch)``; returns ``then(value)`` (through the client's
        ``_core_call``). ``func`` goes into the client's set when the read
        returns, as kazoo's goes in at the reply (a failed read sets none);
        an event right behind the reply may call it before that, on the
        watch thread all the same."""
        self.client._hear_session_events()
        self.client._keep(self)

        def returned(answer):
            value, self.watch = answer
            with _kept_lock:
                fired = self.fired
                if not fired:
                    self._register(watchers, path)
                    self.returned = True
            if fired:
                self.watch.stop()
            return then(value)

        def failed():
            with _kept_lock:
                self.fired = True
            self.client._forget(self)

        callback = lambda event: self.fire(*event)  # noqa: E731
        return self.client._core_call(start, self.client, path, callback, then=returned, failed=failed)

    def _done(self):
        return self.fired or (self.watch is not None and self.watch.stopped)

    def _register(self, watchers, path):
        key = _with_chroot(self.client.chroot, path)
        try:
            watchers[key].add(self.func)
        except TypeError:  # unhashable: kazoo would fail; zoolock just keeps it to itself
            return
        watchers[key].shots.setdefault(self.func, []).append(self)
        self.registered = (watchers, key)

    def _unregister(self):
        """Takes ``func`` out of the client's set; ``False`` if it was taken out already."""
        if self.registered is None:
            return True
        watchers, key = self.registered
        funcs = watchers.get(key)
        if funcs is None or self.func not in funcs:
            return False
        funcs.discard(self.func)
        if not funcs:
            del watchers[key]
        return True

    def fire(self, kind, path, state="CONNECTED"):
        with _kept_lock:
            if self.fired:
                return
            self.fired = True
            call = self._unregister()
        if self.watch is not None:
            self.watch.stop()
        self.client._forget(self)
        if call:
            try:
                self.func(WatchedEvent(kind, state, path))
            except Exception:  # noqa: BLE001 - kazoo logs what a watcher raises
                import logging

                logging.getLogger("zoolock").exception("a watch function raised")
        self.func = None

    def _let_go(self):
        """Its function was taken out of the client's set: never called, not kept."""
        with _kept_lock:
            if self.fired:
                return
            self.fired = True
        if self.watch is not None:
            self.watch.stop()
        self.client._forget(self)
        self.func = None


# ---- the znode API ----------------------------------------------------------

#: Guards each client's set of running watches (added from callers' threads,
#: removed from zoolock's event thread) and its watch functions (a function
#: taken out under it forgets its watches: reentrant).
_kept_lock = threading.RLock()


class _Socket:
    """A view of a session's connection, read as kazoo's socket."""

    def __init__(self, server, local):
        self._server, self._local = server, local

    def getpeername(self):
        """The server's ``(host, port)``, as ``hosts`` names it."""
        return self._server

    def getsockname(self):
        """The local ``(address, port)``."""
        return self._local


class _Connection:
    """What tools read of kazoo's ``client._connection``."""

    def __init__(self, socket, xid):
        #: The connection (``getpeername()``, ``getsockname()``), ``None`` while not connected.
        self._socket = socket
        #: The id of the last request the session sent.
        self._xid = xid


class ZnodeAPI:
    """kazoo's node operations, mixed into ``zoolock.KazooClient``."""

    @property
    def handler(self):
        """threading's primitives and kazoo-like async results (see ``Handler``)."""
        return _HANDLER

    @property
    def _data_watchers(self):
        """kazoo's ``{path: set of watch functions}`` of pending one-shot
        data watches (``get``/``exists`` with ``watch=``), paths with the
        chroot; a function taken out is not called (kazoo's TreeCache does)."""
        return self.__dict__.setdefault("_zoolock_data_watchers", collections.defaultdict(_WatchFuncs))

    @property
    def _child_watchers(self):
        """kazoo's ``{path: set of watch functions}`` of pending one-shot
        ``get_children`` watches (see ``_data_watchers``)."""
        return self.__dict__.setdefault("_zoolock_child_watchers", collections.defaultdict(_WatchFuncs))

    @property
    def client_state(self):
        """kazoo's ``KeeperState`` name: ``"CONNECTED"``, ``"CONNECTING"``
        (suspended) or ``"CLOSED"`` (lost, or not started)."""
        return {"CONNECTED": "CONNECTED", "SUSPENDED": "CONNECTING"}.get(self.state, "CLOSED")

    @property
    def default_acl(self):
        """kazoo's ``default_acl``, set after construction: the ACL of nodes
        that ``create``, ``ensure_path`` and transactions make without one.
        ``None``: the constructor's ``default_acl`` (which lock nodes use)."""
        return self.__dict__.get("_zoolock_default_acl")

    @default_acl.setter
    def default_acl(self, acl):
        _acl(acl)
        self.__dict__["_zoolock_default_acl"] = list(acl) if acl else None

    def _keep(self, watch):
        """Keeps a watch alive while it runs: the core stops a watch whose
        handle is dropped, and kazoo's decorator form drops its object.
        Ended ones (their function returned False, the client stopped) go."""
        with _kept_lock:
            kept = self.__dict__.setdefault("_zoolock_watches", set())
            kept.difference_update([w for w in kept if w._done()])
            kept.add(watch)

    def _hear_session_events(self):
        """kazoo fires every pending one-shot watch with a ``NONE`` event
        when the connection drops (state ``CONNECTING``) or the session ends
        (``EXPIRED_SESSION``, ``CLOSED`` after ``stop()``): so does zoolock,
        although the core's watches would survive both. One listener per client."""
        with _kept_lock:
            if self.__dict__.get("_zoolock_hears"):
                return
            self.__dict__["_zoolock_hears"] = True
        client = weakref.ref(self)

        def on_state(state):
            me = client()
            if me is None:
                return True
            if state == "SUSPENDED":
                keeper = "CONNECTING"
            elif state == "LOST":
                keeper = "CLOSED" if me.__dict__.get("_zoolock_stopped") else "EXPIRED_SESSION"
            else:
                return None
            with _kept_lock:
                # A read still waiting for its reply sets its watch after the event, as kazoo's.
                pending = [w for w in me.__dict__.get("_zoolock_watches", ()) if isinstance(w, _OneShot) and w.returned]
            for one in pending:
                one.fire(EventType.NONE, None, keeper)
            return None

        self.add_listener(on_state)

    def start(self, timeout=15.0):
        """Connects (see the class); kazoo's ``start``. ``DataWatch`` and
        ``ChildrenWatch`` objects that ran when the client stopped (or were
        made while it was stopped) watch again, from what they last saw:
        they call back once the node differs from it, as kazoo's do."""
        from .exceptions import KazooTimeoutError

        self.__dict__["_zoolock_stopped"] = False
        try:
            super().start(timeout)
        except KazooTimeoutError as err:
            if type(err) is not KazooTimeoutError:  # TlsError says why
                raise
            raise KazooTimeoutError("Connection time-out") from err  # kazoo's words; the core's in the cause
        with _kept_lock:
            kept = [w for w in self.__dict__.get("_zoolock_watches", ()) if isinstance(w, DataWatch)]
        for watch in kept:
            watch._resume()

    @property
    def _connection(self):
        """What tools read of kazoo's ``_connection``: ``_socket``, whose
        ``getpeername()`` is the ``(host, port)`` of the server the session
        is connected to (as ``hosts`` names it) and ``getsockname()`` the
        local address (``None`` while not connected), and ``_xid``."""
        server, local = self._server, self._local
        return _Connection(None if server is None else _Socket(server, local), self._xid)

    @property
    def _session_id(self):
        """kazoo's ``_session_id``: the session's id, ``None`` without one."""
        client_id = self.client_id
        return None if client_id is None else client_id[0]

    @property
    def _live(self):
        """kazoo's ``_live``: a ``threading.Event`` set while the client is
        connected (``start_async`` returns it)."""
        with _kept_lock:
            live = self.__dict__.get("_zoolock_live")
            if live is None:
                live = self.__dict__["_zoolock_live"] = threading.Event()
                super().add_listener(lambda state: live.set() if state == "CONNECTED" else live.clear())
                if self.connected:
                    live.set()
        return live

    def start_async(self):
        """kazoo's ``start_async``: connects in the background, trying again
        until connected or ``stop()``, and returns ``_live``, set once
        connected. A ``stop()`` that comes while a try is under way ends the
        session that try opens."""
        live = self._live
        if self.connected:
            return live
        stops = self.__dict__.get("_zoolock_stops", 0)

        def connect():
            from .exceptions import KazooTimeoutError

            while self.__dict__.get("_zoolock_stops", 0) == stops and not self.connected:
                try:
                    self.start()
                except KazooTimeoutError:
                    continue
                except Exception:  # noqa: BLE001 - nowhere to raise it to; kazoo's connection thread logs too
                    logging.getLogger("zoolock").exception("start_async: the client could not start")
                    return
            if self.__dict__.get("_zoolock_stops", 0) != stops:
                self.stop()

        threading.Thread(target=connect, name="zoolock-start", daemon=True).start()
        return live

    def stop(self):
        """Ends the session (see the class); pending one-shot watches fire
        with ``CLOSED``; running ``DataWatch`` and ``ChildrenWatch`` objects
        go on at the next ``start()``."""
        with _kept_lock:
            self.__dict__["_zoolock_stops"] = self.__dict__.get("_zoolock_stops", 0) + 1
        self.__dict__["_zoolock_stopped"] = True
        with _kept_lock:
            kept = [w for w in self.__dict__.get("_zoolock_watches", ()) if isinstance(w, DataWatch)]
        for watch in kept:
            watch._pause()
        return super().stop()

    def restart(self):
        """``stop()`` then ``start()``: a new session, the watches going on."""
        self.stop()
        self.start()

    def add_listener(self, listener):
        """Calls ``listener(state)`` with each new ``KazooState`` (see the
        class); kazoo's ``ConfigurationError`` if it is not callable."""
        if not callable(listener):
            from .exceptions import ConfigurationError

            raise ConfigurationError("listener must be callable")
        return super().add_listener(listener)

    def close(self):
        """kazoo's ``close``: ``stop()`` in zoolock."""
        return self.stop()

    def _forget(self, watch):
        with _kept_lock:
            self.__dict__.get("_zoolock_watches", set()).discard(watch)

    def exists(self, path, watch=None):
        """The node's ``ZnodeStat``, or ``None``; ``watch(event)`` once at its next change."""
        path, watch = _path(path), _watch(watch)
        if watch is None:
            return self._core_call(_zoolock._exists, self, path, then=_stat)
        return _OneShot(self, watch).read(self._data_watchers, path, _zoolock._exists_watched, _stat)

    def get(self, path, watch=None):
        """``(data, ZnodeStat)``, data ``None`` for null data; ``NoNodeError``.
        ``watch(event)`` once at its next change."""
        path, watch = _path(path), _watch(watch)
        if watch is None:
            return self._core_call(_zoolock._get, self, path, then=_read)
        return _OneShot(self, watch).read(self._data_watchers, path, _zoolock._get_watched, _read)

    def get_children(self, path, watch=None, include_data=False):
        """The children's names (with ``include_data``, and the node's
        ``ZnodeStat``); ``watch(event)`` once when they change or the node goes."""
        path, watch = _path(path), _watch(watch)
        include_data = _bool(include_data, "include_data")

        def listed(answer):
            children, stat = answer
            return (children, ZnodeStat(*stat)) if include_data else children

        if watch is None:
            return self._core_call(_zoolock._children, self, path, include_data, then=listed)
        return _OneShot(self, watch).read(self._child_watchers, path, _zoolock._children_watched, listed)

    def create(self, path, value=b"", acl=None, ephemeral=False, sequence=False, makepath=False,
               include_data=False):
        """Creates a node, returning its path (and ``ZnodeStat`` with
        ``include_data``). ``NodeExistsError``; ``NoNodeError`` if a parent is
        missing and ``makepath`` is false; ``NoChildrenForEphemeralsError``.
        A missing chroot is created (kazoo's behaviour; ``create_chroot=False``
        refuses it)."""
        path = _path(path, trailing=_bool(sequence, "sequence"))
        value, acl = _value(value), _acl(acl) or _acl(self.default_acl)
        ephemeral, makepath = _bool(ephemeral, "ephemeral"), _bool(makepath, "makepath")
        include_data = _bool(include_data, "include_data")
        def made(answer):
            created, stat = answer
            return (created, ZnodeStat(*stat)) if include_data else created

        return self._core_call(_zoolock._create, self, path, value, acl, ephemeral, sequence, makepath, then=made)

    def set(self, path, value, version=-1):
        """Sets the node's data if at ``version`` (-1: any), returning its new
        ``ZnodeStat``; ``BadVersionError``, ``NoNodeError``."""
        path, value, version = _path(path), _value(value), _int(version, "version")
        return self._core_call(_zoolock._set, self, path, value, version, then=_stat)

    def delete(self, path, version=-1, recursive=False):
        """Deletes the node if at ``version``; ``recursive`` deletes its
        descendants first (not atomically, as kazoo). Returns ``True``."""
        path, version = _path(path), _int(version, "version")
        return self._core_call(_zoolock._delete, self, path, version, _bool(recursive, "recursive"), then=_true)

    def ensure_path(self, path, acl=None):
        """Creates the node and its missing ancestors (and a missing chroot);
        fine if it exists. Returns ``True``."""
        return self._core_call(_zoolock._ensure_path, self, _path(path), _acl(acl) or _acl(self.default_acl), then=_true)

    def sync(self, path):
        """Waits until the server has every write committed before; returns ``path``."""
        return self._core_call(_zoolock._sync, self, _path(path), then=lambda _: path)

    def retry(self, func, *args, **kwargs):
        """``func(*args, **kwargs)`` until it returns, as kazoo's ``retry``:
        again after ``ConnectionLoss`` or ``SessionExpiredError`` once
        connected (at most 5 tries in a minute, then that error), and after
        ``ForceRetryError`` or ``OperationTimeoutError`` (kazoo's or
        zoolock's) after a pause of 0.1 s, doubling up to a minute, ±40%, for
        as long as they come (kazoo's ``KazooRetry`` defaults)."""
        delay = _BACKOFF_FIRST
        while True:
            try:
                return _zoolock._retry(self, func, *args, **kwargs)
            except _RETRY_AFTER_BACKOFF:
                time.sleep(delay * random.uniform(1 - _BACKOFF_JITTER, 1 + _BACKOFF_JITTER))
                delay = min(delay * 2, _BACKOFF_MAX)

    def transaction(self):
        """kazoo's ``TransactionRequest``: writes committed together or not at all."""
        return TransactionRequest(self)

    def exists_async(self, path, watch=None):
        """``exists`` as an ``AsyncResult``."""
        return self._async(self.exists, path, watch)

    def get_async(self, path, watch=None):
        """``get`` as an ``AsyncResult``."""
        return self._async(self.get, path, watch)

    def get_children_async(self, path, watch=None, include_data=False):
        """``get_children`` as an ``AsyncResult``."""
        return self._async(self.get_children, path, watch, include_data)

    def create_async(self, path, value=b"", acl=None, ephemeral=False, sequence=False, makepath=False,
                     include_data=False):
        """``create`` as an ``AsyncResult``."""
        return self._async(self.create, path, value, acl, ephemeral, sequence, makepath, include_data)

    def set_async(self, path, value, version=-1):
        """``set`` as an ``AsyncResult``."""
        return self._async(self.set, path, value, version)

    def delete_async(self, path, version=-1):
        """``delete`` (not recursive) as an ``AsyncResult``."""
        return self._async(self.delete, path, version)

    def ensure_path_async(self, path, acl=None):
        """``ensure_path`` as an ``AsyncResult``."""
        return self._async(self.ensure_path, path, acl)

    def sync_async(self, path):
        """``sync`` as an ``AsyncResult``."""
        return self._async(self.sync, path)

    def get_acls(self, path):
        """``([ACL, ...], ZnodeStat)``: the node's ACL as kazoo's ``ACL``
        tuples (equal to ``kazoo.security``'s); ``NoNodeError``."""
        def read(answer):
            triples, stat = answer
            return [ACL(perms, Id(scheme, ident)) for perms, scheme, ident in triples], ZnodeStat(*stat)

        return self._core_call(_zoolock._get_acls, self, _path(path), then=read)

    def set_acls(self, path, acls, version=-1):
        """Replaces the node's ACL if it is at ``version`` (its ``aversion``;
        -1: any), returning the new ``ZnodeStat``. ``BadVersionError``,
        ``NoNodeError``, ``InvalidACLError`` (also for an empty list)."""
        path = _path(path)
        if isinstance(acls, ACL) or not isinstance(acls, (tuple, list)) or (
                len(acls) == 2 and isinstance(acls[0], int)):
            raise TypeError("Invalid type for 'acl' (acl must be a tuple/list of ACL's)")
        version = _int(version, "version")
        return self._core_call(_zoolock._set_acls, self, path, _acl(acls) or [], version, then=_stat)

    def add_auth(self, scheme, credential):
        """Sends credentials (``add_auth("digest", "user:password")``);
        accepted ones are sent again on the sessions opened after an expiry.
        ``AuthFailedError`` if the server refuses them (that ends the
        session; zoolock opens a new one without them). Returns ``True``."""
        if not isinstance(scheme, str):
            raise TypeError("Invalid type for 'scheme' (string expected)")
        if not isinstance(credential, str):
            raise TypeError("Invalid type for 'credential' (string expected)")
        return self._core_call(_zoolock._add_auth, self, scheme, credential, then=_true)

    def command(self, cmd=b"ruok"):
        """Sends a four-letter word (``ruok``, ``envi``, ``stat``, ``mntr``, …)
        and returns the answer as ``str``; ``ConnectionLoss`` if not
        connected. On a plain connection of its own, to the first server of
        ``hosts`` that accepts one (zoolock's client library does not say
        which server the session is on: the same one with one host)."""
        if isinstance(cmd, bytes):
            cmd = cmd.decode("ascii", "replace")
        if not isinstance(cmd, str):
            raise TypeError("Invalid type for 'cmd' (bytes expected)")
        if not self.connected:
            raise ConnectionLoss("No connection to server")
        return _zoolock._command(self, cmd)

    def server_version(self, retries=3):
        """The server's version as a tuple of ints, ``(3, 8, 0)``, from its
        ``envi`` answer, asked again up to ``retries`` times while the
        answer is cut off (kazoo's); then ``KazooException``."""
        tries = 1 + max(0, retries)
        for _ in range(tries):
            version = _zoolock._parse_version(self.command(b"envi"))
            if version:
                return tuple(version)
        raise KazooException(f"Unable to fetch useable server version after trying {tries} times")

    def unchroot(self, path):
        """``path`` without the chroot (``"/app/a"`` is ``"/a"`` under ``/app``)."""
        chroot = self.chroot
        if not chroot:
            return path
        if path == chroot:
            return "/"
        return path[len(chroot):] if path.startswith(chroot) else path

    @property
    def logger(self):
        """The ``logging`` logger zoolock's lines go to: ``"zoolock"``."""
        return logging.getLogger("zoolock")

    def reconfig(self, joining, leaving, new_members, from_config=-1):
        """Changes the ensemble (kazoo's ``reconfig``): ``joining`` server
        specs and ``leaving`` server ids (comma-separated), or
        ``new_members``; only if the config is at ``from_config`` (-1:
        any). Returns ``(config bytes, ZnodeStat)``. The servers must have
        ``reconfigEnabled=true`` (else ``ZookeeperError``, "ZooKeeper
        reconfiguration disabled") and the session be allowed to write
        ``/zookeeper/config``."""
        for name, value in (("joining", joining), ("leaving", leaving), ("new_members", new_members)):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"Invalid type for '{name}' (string expected)")
        from_config = _int(from_config, "from_config")
        return self._core_call(_zoolock._reconfig, self, joining, leaving, new_members, from_config, then=_read)

    def reconfig_async(self, joining, leaving, new_members, from_config=-1):
        """``reconfig`` as an ``AsyncResult``."""
        return self._async(self.reconfig, joining, leaving, new_members, from_config, path=False)

    def get_acls_async(self, path):
        """``get_acls`` as an ``AsyncResult``."""
        return self._async(self.get_acls, path)

    def set_acls_async(self, path, acls, version=-1):
        """``set_acls`` as an ``AsyncResult``."""
        return self._async(self.set_acls, path, acls, version)

    def add_auth_async(self, scheme, credential):
        """``add_auth`` as an ``AsyncResult``."""
        if not isinstance(credential, str):
            raise TypeError("Invalid type for 'credential' (string expected)")
        return self._async(self.add_auth, scheme, credential)

    def _commit(self, operations, fence):
        """Commits ``TransactionRequest`` operations (``_zoolock._commit``'s
        tuples): one result per operation, kazoo's."""
        count = len(operations)

        def committed(answer):
            failed, results = answer
            if failed is None:
                return [ZnodeStat(*r) if isinstance(r, tuple) else r for r in results]
            return [RolledBackError() if i < failed else results if i == failed else RuntimeInconsistency()
                    for i in range(count)]

        return self._core_call(_zoolock._commit, self, operations, fence, then=committed)

    def _call(self, request, async_object):
        """kazoo's ``_call(request, async_object)``, for the request kazoo's
        own classes send through it: a ``Transaction``, which kazoo's
        ``TransactionRequest`` (and an application's subclass of it)
        commits so, its paths with the chroot. Returns ``True`` (sent), as
        kazoo's."""
        if type(request).__name__ != "Transaction" or not hasattr(request, "operations"):
            raise TypeError(f"zoolock's client takes kazoo's Transaction through _call, not {type(request).__name__}")
        operations = [self._kazoo_operation(op) for op in request.operations]
        _starting.result = async_object
        try:
            self._commit(operations, None)
        finally:
            _starting.result = None
        return True

    def _kazoo_operation(self, op):
        """kazoo's ``Create``, ``Delete``, ``SetData`` or ``CheckVersion`` as
        a ``_zoolock._commit`` tuple."""
        kind, path = type(op).__name__, self.unchroot(op.path)
        if kind == "Create":
            if op.flags & ~3:
                raise ValueError(f"zoolock's transactions create no container or TTL node (flags {op.flags})")
            acl = _acl(op.acl) or _acl(self.default_acl)
            return ("create", path, op.data, acl, bool(op.flags & 1), bool(op.flags & 2))
        if kind == "Delete":
            return ("delete", path, op.version)
        if kind == "SetData":
            return ("set", path, op.data, op.version)
        if kind == "CheckVersion":
            return ("check", path, op.version)
        raise TypeError(f"not a transaction operation: {kind}")

    def _async(self, method, *args, path=True):
        """``method(*args)`` as an ``AsyncResult``: run here, so that bad
        arguments raise here (as kazoo checks them before sending) and its
        request is sent now, in the order of the client's calls (a later
        ``exists`` sees an earlier ``create_async``'s node); its core call
        (``_core_call``) ends on the results thread."""
        if path and args and not isinstance(args[0], str):
            raise TypeError("Invalid type for 'path' (string expected)")
        result = _starting.result = AsyncResult()
        try:
            method(*args)
        finally:
            unstarted = _starting.result is result
            _starting.result = None
        if unstarted:
            raise RuntimeError(f"zoolock: {method.__name__} made no core call to start")
        return result

    def _core_call(self, func, *args, then, failed=None):
        """The core call ``func(*args)`` with its value through ``then``,
        ``failed()`` first if it raises; inside ``_async``, started instead
        (``done=``), and the ``AsyncResult`` returned."""
        result = getattr(_starting, "result", None)
        if result is None:
            try:
                value = func(*args)
            except BaseException:
                if failed is not None:
                    failed()
                raise
            return then(value)
        _starting.result = None
        try:
            func(*args, done=lambda ok, value: result._complete(ok, value, then, failed))
        except BaseException as err:  # noqa: B036 - kazoo hands a refused call's error to its result
            result._complete(False, err, then, failed)
        return result

    def DataWatch(self, path, func=None, *args, **kwargs):  # noqa: N802 - kazoo's name
        """kazoo's ``DataWatch(path, func)``, also as a decorator."""
        return DataWatch(self, path, func, *args, **kwargs)

    def ChildrenWatch(self, path, func=None, allow_session_lost=True, send_event=False):  # noqa: N802
        """kazoo's ``ChildrenWatch(path, func)``, also as a decorator."""
        return ChildrenWatch(self, path, func, allow_session_lost, send_event)

    def Election(self, path, identifier=None):  # noqa: N802 - kazoo's name
        """kazoo's ``Election(path, identifier)``."""
        return Election(self, path, identifier)


def _given(name):
    return property(lambda self: self._given[name], doc=f"kazoo's ``{name}``: as given to ``KazooClient()``.")


for _name in ("keyfile", "keyfile_password", "certfile", "ca", "use_ssl", "verify_certs", "check_hostname",
              "randomize_hosts", "read_only"):
    setattr(ZnodeAPI, _name, _given(_name))
del _name


class TransactionRequest:
    """kazoo's ``TransactionRequest``: ``check``, ``create``, ``set_data``
    and ``delete`` queue operations; ``commit()`` sends them as one
    ZooKeeper multi and returns one result per operation: the path created,
    ``True`` for a check or delete, the ``ZnodeStat`` of a set. If the server
    refuses one, nothing is made, and the results are exceptions: the
    refused operation's (``NoNodeError``, ``BadVersionError``, …),
    ``RolledBackError`` before it and ``RuntimeInconsistency`` after it.

    Made by ``lock.fenced()``, it commits only while the lock holds, else
    raises ``NotHeldError`` and writes nothing."""

    def __init__(self, client, fence=None):
        self.client = client
        self.fence = fence
        self.operations = []
        self.committed = False

    def create(self, path, value=b"", acl=None, ephemeral=False, sequence=False):
        """Adds a create (as ``KazooClient.create``, without ``makepath``);
        ``value`` may be ``None``, ZooKeeper's null (kazoo 2.11 refuses it here)."""
        if not isinstance(path, str):
            raise TypeError("Invalid type for 'path' (string expected)")
        value = _value(value)
        acl = _acl(acl) or _acl(self.client.default_acl)
        path = _path(path, trailing=_bool(sequence, "sequence"))
        self._add(("create", path, value, acl, _bool(ephemeral, "ephemeral"), sequence))

    def delete(self, path, version=-1):
        """Adds a delete, if the node is at ``version`` (-1: any)."""
        self._add(("delete", _path(path), _int(version, "version")))

    def set_data(self, path, value, version=-1):
        """Adds a set of the node's data (``None``: null), if at ``version`` (-1: any)."""
        path, value = _path(path), _value(value)
        self._add(("set", path, value, _int(version, "version")))

    def check(self, path, version):
        """Adds a check that the node is at ``version``."""
        self._add(("check", _path(path), _int(version, "version")))

    def _add(self, op):
        if self.committed:
            raise ValueError("Transaction already committed")
        self.operations.append(op)

    def commit(self):
        """Sends the operations; see the class. Raises ``ValueError`` if
        already committed, ``NotHeldError`` for a fenced one whose lock does
        not hold, and what the request as a whole failed with."""
        if self.committed:
            raise ValueError("Transaction already committed")
        self.committed = True
        # Through the client's own method, so that a wrapper of it serves too.
        return self.client._commit(list(self.operations), self.fence)

    def commit_async(self):
        """``commit()`` as an ``AsyncResult``."""
        return self.client._async(self.commit)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, exc_tb):
        if not exc_type:
            self.commit()


def _takes_event(func, given):
    """Whether ``func`` accepts ``given`` + 1 positional arguments."""
    try:
        inspect.signature(func).bind(*([None] * (given + 1)))
        return True
    except TypeError:
        return False
    except ValueError:  # no signature (a builtin): kazoo's way, try with the event first
        return True


#: What a watch that never called back has seen: a state no node has (an
#: mzxid below any zxid; a child name with a slash), so that it calls back
#: once it runs.
_NEVER_MZXID = -1
_NEVER_CHILDREN = ["/"]


class DataWatch:
    """kazoo's ``DataWatch(client, path, func)``: ``func(data, stat)`` (or
    ``func(data, stat, event)``) now and after each change of the node,
    with ``None``s while it does not exist, until ``func`` returns
    ``False``. As in kazoo, the first call is made in the constructing
    thread (what it raises, the constructor raises; the watch goes on), the
    later ones on the client's watch thread, one at a time. Survives
    reconnects and session expiry (the core's ``DataWatch``), and the
    client's ``stop()`` and ``start()``: it reads again and calls back if
    the node changed meanwhile. Made on a stopped client, it starts with
    the client."""

    def __init__(self, client, path, func=None, *args, **kwargs):
        self._client = client
        self._path = _path(path)
        self._func = None
        self._watch = None
        self._used = False
        self._run_lock = threading.Lock()
        #: Ended for good: stop(), func returned False, an error.
        self._ended = False
        #: To watch again at the client's next start().
        self._paused = False
        #: What the last call was given (see ``_start_from``).
        self._seen = _NEVER_MZXID
        self._changed = None
        if func is not None:
            self(func)

    def __call__(self, func):
        if self._used:
            raise KazooException("A function has already been associated with this DataWatch instance.")
        self._used = True
        self._func = func
        with_event = _takes_event(func, 2)

        def call(data, stat, event):
            self._seen = None if stat is None else stat[1]  # the mzxid
            stat = _stat(stat)
            if with_event:
                return func(data, stat, _event(event))
            return func(data, stat)

        self._start(_zoolock._data_watch, call)
        return func

    def _start_from(self, changed):
        """The core watch, from what the last call saw (the mzxid, ``None``: absent)."""
        return _zoolock._data_watch(self._client, self._path, changed, resume=True, seen=self._seen)

    def _start(self, start, call):
        """Starts the core watch, which makes the first ``call`` in this
        thread; raises what that call raised, once the watch runs."""
        from .exceptions import ConnectionClosedError

        raised = []

        def changed(*args):
            try:
                result = call(*args)
            except BaseException as err:  # noqa: B036 - the first call's, raised by the constructor
                if raised is None:
                    raise  # a later call's: reported by the watch thread
                raised.append(err)
                return None
            if result is False:
                self._ended = True
            return result

        self._changed = changed
        try:
            self._watch = start(self._client, self._path, changed)
        except ConnectionClosedError:
            # kazoo's: a watch made on a stopped client starts with it.
            self._paused = self._resumable()
        finally:
            first, raised = raised, None
        self._client._keep(self)
        if first:
            raise first[0]

    def _resumable(self):
        return True

    def _pause(self):
        """The client stops: a running watch goes on at its next start."""
        with self._run_lock:
            running = self._watch is not None and not self._watch.stopped and not self._ended
            if running and self._resumable():
                self._paused = True

    def _resume(self):
        """The client started again: watch from what the last call saw."""
        from .exceptions import ConnectionClosedError

        with self._run_lock:
            if not self._paused or self._ended:
                return
            self._paused = False
            try:
                self._watch = self._start_from(self._changed)
            except ConnectionClosedError:
                self._paused = True  # stopped again meanwhile
            except NoNodeError:
                self._ended = True  # a children watch's node is gone: kazoo's ends
            except Exception:  # noqa: BLE001 - no caller to raise to
                import logging

                logging.getLogger("zoolock").exception("a watch could not start again on %s", self._path)
                self._ended = True

    def _done(self):
        if self._ended:
            return True
        return not self._paused and (self._watch is None or self._watch.stopped)

    @property
    def _stopped(self):
        return self._done()

    def stop(self):
        """Ends the watch (zoolock's; kazoo's way is returning ``False``)."""
        self._ended = True
        if self._watch is not None:
            self._watch.stop()


class ChildrenWatch(DataWatch):
    """kazoo's ``ChildrenWatch(client, path, func, allow_session_lost=True,
    send_event=False)``: ``func(children)`` (``func(children, event)`` with
    ``send_event``) now, in the constructing thread, and after each change,
    on the client's watch thread, until ``func`` returns ``False`` or the
    node is deleted. On a node that does not exist it stops at once without
    a call, as kazoo's. ``allow_session_lost=False`` stops it when the
    session is lost (also by ``stop()``); otherwise it lists again at the
    client's next ``start()`` and calls back if the children changed."""

    def __init__(self, client, path, func=None, allow_session_lost=True, send_event=False):
        self._allow_session_lost = allow_session_lost
        self._send_event = send_event
        super().__init__(client, path, func)

    def __call__(self, func):
        if self._used:
            raise KazooException("A function has already been associated with this ChildrenWatch instance.")
        self._used = True
        self._func = func
        self._seen = _NEVER_CHILDREN

        def call(children, event):
            self._seen = list(children)
            return func(children, _event(event)) if self._send_event else func(children)

        try:
            self._start(_zoolock._children_watch, call)
        except NoNodeError:
            self._ended = True
            return func  # kazoo's: a watch of a missing node ends silently
        if not self._allow_session_lost and self._watch is not None:

            def on_state(state):
                if state == "LOST" or self._done():
                    self.stop()
                    return True
                return None

            self._client.add_listener(on_state)
        return func

    def _start_from(self, changed):
        return _zoolock._children_watch(self._client, self._path, changed, seen=self._seen)

    def _resumable(self):
        return self._allow_session_lost


class Election:
    """kazoo's ``Election(client, path, identifier=None)``, the core's
    election: ``run(func, *args, **kwargs)`` waits until this candidate leads
    (holds the ``Lock`` at ``path``, whose candidates kazoo's ``Election``
    shares), calls ``func``, and resigns when it returns or raises.
    ``cancel()`` withdraws a waiting ``run`` (it returns ``None``);
    ``contenders()`` lists the identifiers, the leader first. zoolock's own:
    ``fenced()`` during ``func``, a transaction that commits only while this
    term lasts, and ``lock`` for the term's ``fencing_token`` and ``lost``
    event."""

    def __init__(self, client, path, identifier=None):
        self._election = _zoolock.Election(client, path, identifier)
        self._client = client
        self.lock = self._election.lock

    def run(self, func, *args, **kwargs):
        """Waits to lead, calls ``func(*args, **kwargs)``, then resigns; returns
        ``None`` (also when cancelled); ``ValueError`` if ``func`` is not callable."""
        self._election.run(func, *args, **kwargs)

    def cancel(self):
        """Withdraws this candidate: a waiting ``run`` returns."""
        self._election.cancel()

    def contenders(self):
        """The candidates' identifiers, the leader first."""
        return self._election.contenders()

    def fenced(self):
        """A transaction that commits only while the term this candidate
        leads now (in ``run``'s ``func``) lasts; else, and in a later term,
        its commit raises ``NotHeldError``."""
        return TransactionRequest(self._client, fence=self._election.term_fence())


def fenced(self):
    """``lock.fenced()``: a ``TransactionRequest`` that commits only while
    this lock (or semaphore lease) holds — its multi first checks the
    holder's own node — else raises ``NotHeldError`` and writes nothing.
    State kept in ZooKeeper is then safe from a holder that lost its lock
    without knowing (a long pause, a partition)."""
    return TransactionRequest(_zoolock._holder_client(self), fence=self)
