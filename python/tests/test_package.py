"""The installed package: importable from anywhere, typed, documented."""

import inspect
import subprocess
import sys
from pathlib import Path

import zoolock
import zoolock.client


def test_imports_from_any_directory(tmp_path):
    done = subprocess.run([sys.executable, "-c", "import zoolock, zoolock.client, zoolock.exceptions, "
                           "zoolock.security; print(zoolock.__file__)"],
                          cwd=tmp_path, capture_output=True, text=True, check=True)
    assert "site-packages" in done.stdout


def test_the_stubs_are_the_installed_package_s_api():
    """mypy's stubtest: every class, function, argument and default of the
    stubs (.pyi) against the installed package, native module included (as
    pydantic-core checks its stubs); what differs on purpose is listed, with
    its reason, in python/stubtest-allowlist.txt."""
    package = Path(zoolock.__file__).parent
    assert (package / "py.typed").exists() and (package / "_zoolock.pyi").exists()
    allowlist = Path(__file__).resolve().parents[1] / "stubtest-allowlist.txt"
    done = subprocess.run([sys.executable, "-m", "mypy.stubtest", "zoolock", "--allowlist", str(allowlist)],
                          cwd=package.parent.parent, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_public_class_and_method_has_a_docstring():
    missing = []
    for name in zoolock.__all__:
        obj = getattr(zoolock, name)
        if not inspect.isclass(obj):
            continue
        if not (obj.__doc__ or "").strip():
            missing.append(name)
        for attr, member in vars(obj).items():
            if attr.startswith("_") or isinstance(member, str):
                continue
            if not (getattr(member, "__doc__", None) or "").strip():
                missing.append(f"{name}.{attr}")
    assert missing == []


def test_kazoo_names_and_hierarchy():
    from kazoo import exceptions as kazoo_exceptions

    for name in ("ConnectionLoss", "NoNodeError", "NoAuthError", "SessionExpiredError", "ConnectionClosedError",
                 "CancelledError", "LockTimeout", "AuthFailedError", "NodeExistsError", "ZookeeperError"):
        ours, theirs = getattr(zoolock, name), getattr(kazoo_exceptions, name)
        # zoolock's own classes (its MRO also holds kazoo's: test_kazoo_exceptions.py) in kazoo's order.
        assert [c.__name__ for c in ours.__mro__ if c.__module__ == "zoolock.exceptions"] == \
            [c.__name__ for c in theirs.__mro__ if c.__name__ in zoolock.__dict__ and c.__name__ != "Exception"]
    assert zoolock.KazooState.LOST == "LOST" and zoolock.client.KazooClient is zoolock.KazooClient


def test_kazoo_argument_names_and_defaults():
    from kazoo.client import KazooClient as KazooKazooClient
    from kazoo.recipe.counter import Counter as KazooCounter
    from kazoo.recipe.lease import MultiNonBlockingLease as KazooMultiLease
    from kazoo.recipe.lease import NonBlockingLease as KazooLease
    from kazoo.recipe.lock import Lock as KazooLock
    from kazoo.recipe.lock import Semaphore as KazooSemaphore

    def params(function, skip=0):
        listed = list(inspect.signature(function).parameters.values())[skip:]
        return [(p.name, p.default) for p in listed if p.kind is not p.VAR_KEYWORD and p.name != "self"]

    pairs = [
        (zoolock.KazooClient, KazooKazooClient.__init__),
        (zoolock.Lock, KazooLock.__init__),
        (zoolock.Lock.acquire, KazooLock.acquire),
        (zoolock.Semaphore, KazooSemaphore.__init__),
        (zoolock.Semaphore.acquire, KazooSemaphore.acquire),
        (zoolock.Counter, KazooCounter.__init__),
        (zoolock.NonBlockingLease, KazooLease.__init__),
        (zoolock.MultiNonBlockingLease, KazooMultiLease.__init__),
    ]
    for ours, theirs in pairs:
        kazoo_params = params(theirs)
        assert params(ours)[: len(kazoo_params)] == kazoo_params, ours
