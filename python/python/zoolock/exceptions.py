"""kazoo's ``kazoo.exceptions`` names, with kazoo's hierarchy."""

from . import (
    AuthFailedError,
    CancelledError,
    ConfigurationError,
    ConnectionClosedError,
    ConnectionLoss,
    ForkedError,
    KazooException,
    LockTimeout,
    NoAuthError,
    NodeExistsError,
    NoNodeError,
    SessionExpiredError,
    ZookeeperError,
)

__all__ = [
    "AuthFailedError",
    "CancelledError",
    "ConfigurationError",
    "ConnectionClosedError",
    "ConnectionLoss",
    "ForkedError",
    "KazooException",
    "LockTimeout",
    "NoAuthError",
    "NodeExistsError",
    "NoNodeError",
    "SessionExpiredError",
    "ZookeeperError",
]
