"""Running kazoo's own test classes (as its wheel ships them) against zoolock:
the class decorator the three ``test_kazoo_*suite.py`` modules share."""

import types

import pytest


def shipped_copy(cls, name):
    """A copy of kazoo's test function (same code, same globals), so that
    marking it leaves kazoo's own untouched."""
    test = getattr(cls, name)
    copy = types.FunctionType(test.__code__, test.__globals__, test.__name__, test.__defaults__, test.__closure__)
    copy.__qualname__, copy.__doc__ = test.__qualname__, test.__doc__
    return copy


def adapter(not_run, waiting_for=None):
    """A class decorator factory: ``@adapted(kazoos)`` makes the class run
    kazoo's test class ``kazoos``, its tests in ``not_run`` skipped and those
    in ``waiting_for`` strict xfails. Both map ``"Class.test"`` to a reason
    (``waiting_for`` to ``(reason, deadline)``)."""

    def adapted(kazoos):
        def adapt(cls):
            cls.shipped = kazoos
            for key, reason in not_run.items():
                owner, name = key.split(".")
                if owner == kazoos.__name__:
                    setattr(cls, name, pytest.mark.skip(reason=reason)(shipped_copy(kazoos, name)))
            for key, (reason, _) in (waiting_for or {}).items():
                owner, name = key.split(".")
                if owner == kazoos.__name__:
                    setattr(cls, name, pytest.mark.xfail(strict=True, reason=reason)(shipped_copy(kazoos, name)))
            return cls

        return adapt

    return adapted
