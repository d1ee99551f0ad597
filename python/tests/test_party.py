"""Party and ShallowParty in kazoo's layouts, shared with kazoo's own classes."""

import threading

import pytest
import zoolock
from conftest import DEADLINE
from kazoo.recipe.party import Party as KazooParty
from kazoo.recipe.watchers import DataWatch
from kazoo.recipe.party import ShallowParty as KazooShallowParty


@pytest.mark.parametrize("kind", ["Party", "ShallowParty"])
def test_members_shared_with_kazoo(make_client, kz, path, kind):
    kazoo_class = {"Party": KazooParty, "ShallowParty": KazooShallowParty}[kind]
    zoolocks = [getattr(make_client(), kind)(path, f"z{i}") for i in range(2)]
    assert isinstance(zoolocks[0], getattr(zoolock, kind)) and isinstance(zoolocks[0], zoolock.Party)
    kazoos = kazoo_class(kz, path, "k")
    assert len(zoolocks[0]) == 0 and list(zoolocks[0]) == []
    for member in zoolocks:
        member.join()
        assert member.participating
    kazoos.join()
    assert sorted(zoolocks[1]) == ["k", "z0", "z1"] and len(zoolocks[0]) == 3
    assert sorted(kazoos) == ["k", "z0", "z1"], "kazoo lists zoolock's members"
    node = zoolocks[0].node
    if kind == "Party":
        assert node.endswith("__party__") and len(node) == 41
        assert kz.get(zoolocks[0].create_path)[0] == b"z0" == zoolocks[0].data
    else:
        assert node.endswith("-z0") and len(node) == 35
    assert zoolocks[1].leave() is True and zoolocks[1].leave() is False
    assert not zoolocks[1].participating
    kazoos.leave()
    assert list(zoolocks[0]) == ["z0"]


def test_a_member_joins_again_after_an_expiry(harness, client, kz, path):
    """kazoo's member stays ``participating`` with its node gone; zoolock's node comes back."""
    member = client.Party(path, "me")
    member.join()
    (node,) = kz.get_children(path)
    owner = kz.exists(f"{path}/{node}").owner_session_id
    harness.expire(client.client_id[0])
    # The rejoin may beat any watch to the empty list, so wait for the owner to change:
    # an ephemeral node changes owner only by being deleted and created again.
    rejoined = threading.Event()

    def watch(data, stat):
        if stat is not None and stat.owner_session_id != owner:
            rejoined.set()
            return False

    DataWatch(kz, f"{path}/{node}", watch)
    assert rejoined.wait(DEADLINE), "the node did not come back with the next session"
    assert kz.get_children(path) == [node]
    assert member.participating and list(KazooParty(kz, path)) == ["me"]


def test_party_arguments(client, kz, path):
    with pytest.raises(ValueError):
        client.ShallowParty(path, "a/b")
    with pytest.raises(TypeError):
        zoolock.Party(kz, path)
    nameless = client.Party(path)
    nameless.join()
    assert list(nameless) == [""] and nameless.data == b""
