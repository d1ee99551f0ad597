"""kazoo's ``kazoo.client`` names: ``from zoolock.client import KazooClient, KazooState``."""

from . import KazooClient, KazooState

__all__ = ["KazooClient", "KazooState"]
