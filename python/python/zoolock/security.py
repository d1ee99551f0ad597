"""kazoo's ``kazoo.security`` helpers for ``KazooClient(default_acl=...)``.

ACLs are ``(perms, (scheme, id))`` tuples, so kazoo's own ``ACL`` objects
work as well as these.
"""

import hashlib
from base64 import b64encode
from typing import List, NamedTuple


class Permissions:
    """ZooKeeper's permission bits."""

    READ = 1
    WRITE = 2
    CREATE = 4
    DELETE = 8
    ADMIN = 16
    ALL = 31


class Id(NamedTuple):
    """Who an ACL entry is about: ``Id("digest", "user:hash")``."""

    scheme: str
    id: str


class ACL(NamedTuple):
    """One ACL entry: permission bits for an ``Id``."""

    perms: int
    id: Id

    @property
    def acl_list(self) -> List[str]:
        """The permissions' names, as kazoo's: ``["ALL"]``, or each of
        ``READ``, ``WRITE``, ``CREATE``, ``DELETE``, ``ADMIN`` granted."""
        if self.perms & Permissions.ALL == Permissions.ALL:
            return ["ALL"]
        names = ("READ", "WRITE", "CREATE", "DELETE", "ADMIN")
        return [name for name in names if self.perms & getattr(Permissions, name)]

    def __repr__(self) -> str:
        return f"ACL(perms={self.perms!r}, acl_list={self.acl_list}, id={self.id!r})"


def make_digest_acl_credential(username: str, password: str) -> str:
    """``"username:base64(sha1(username:password))"``, as the digest scheme stores it."""
    digest = hashlib.sha1(f"{username}:{password}".encode()).digest()
    return f"{username}:{b64encode(digest).decode()}"


def make_acl(scheme: str, credential: str, read: bool = False, write: bool = False,
             create: bool = False, delete: bool = False, admin: bool = False,
             all: bool = False) -> ACL:
    """An ACL entry from permission flags, as kazoo's ``make_acl``."""
    if all:
        perms = Permissions.ALL
    else:
        perms = ((Permissions.READ if read else 0) | (Permissions.WRITE if write else 0)
                 | (Permissions.CREATE if create else 0) | (Permissions.DELETE if delete else 0)
                 | (Permissions.ADMIN if admin else 0))
    return ACL(perms, Id(scheme, credential))


def make_digest_acl(username: str, password: str, read: bool = False, write: bool = False,
                    create: bool = False, delete: bool = False, admin: bool = False,
                    all: bool = False) -> ACL:
    """A digest ACL entry for ``username``/``password``, as kazoo's ``make_digest_acl``."""
    credential = make_digest_acl_credential(username, password)
    return make_acl("digest", credential, read=read, write=write, create=create,
                    delete=delete, admin=admin, all=all)


OPEN_ACL_UNSAFE: List[ACL] = [ACL(Permissions.ALL, Id("world", "anyone"))]
CREATOR_ALL_ACL: List[ACL] = [ACL(Permissions.ALL, Id("auth", ""))]
READ_ACL_UNSAFE: List[ACL] = [ACL(Permissions.READ, Id("world", "anyone"))]

__all__ = ["ACL", "CREATOR_ALL_ACL", "Id", "OPEN_ACL_UNSAFE", "Permissions", "READ_ACL_UNSAFE",
           "make_acl", "make_digest_acl", "make_digest_acl_credential"]
