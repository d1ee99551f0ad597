"""Counter in kazoo's format, shared with kazoo's Counter on the same path."""

import threading

import pytest
from kazoo.recipe.counter import Counter as KazooCounter


def test_zoolock_and_kazoo_count_on_one_node(client, kz, path):
    ours, theirs = client.Counter(path), KazooCounter(kz, path)
    assert ours.value == 0 and ours.pre_value is None
    ours += 5
    assert (ours.pre_value, ours.post_value) == (0, 5)
    assert kz.get(path)[0] == b"5" and theirs.value == 5
    theirs += 2
    ours -= 10
    assert (ours.pre_value, ours.post_value) == (7, -3) and theirs.value == -3
    assert isinstance(ours, type(client.Counter(path)))  # += gave the counter back


def test_floats_and_curators_format_as_kazoo_writes_them(client, kz, path):
    ours, theirs = client.Counter(path + "/f", 1.0), KazooCounter(kz, path + "/f", 1.0)
    ours += 1.5
    theirs += 0.25
    assert kz.get(path + "/f")[0] == b"2.75" and ours.value == 2.75 and type(ours.value) is float
    ours, theirs = client.Counter(path + "/c", support_curator=True), KazooCounter(kz, path + "/c", support_curator=True)
    ours += 258
    theirs -= 259
    assert kz.get(path + "/c")[0] == b"\xff\xff\xff\xff" and ours.value == -1


def test_concurrent_changes_from_both_clients_all_count(client, kz, path):
    ours, theirs = client.Counter(path), KazooCounter(kz, path)

    def add(counter):
        for _ in range(20):
            counter += 1

    threads = [threading.Thread(target=add, args=(c,)) for c in (ours, theirs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert ours.value == 40 == theirs.value


def test_kazoos_type_errors_and_unreadable_data(client, kz, path):
    counter = client.Counter(path)
    with pytest.raises(TypeError, match="invalid type"):
        counter += 1.5
    floats = client.Counter(path + "/f", 0.0)
    with pytest.raises(TypeError, match="invalid type"):
        floats += 1
    with pytest.raises(TypeError, match="support_curator"):
        client.Counter(path, 0.0, support_curator=True)
    assert counter.default == 0 and counter.default_type is int and floats.default_type is float
    assert counter.value == 0 and counter.post_value is None, "nothing was written"
    kz.set(path, b"seven")
    with pytest.raises(ValueError, match="seven"):
        counter += 1
    assert counter.post_value is None and kz.get(path)[0] == b"seven"


def test_a_change_waits_out_a_partition_and_counts_once_across_an_expiry(client, kz, harness, path):
    from conftest import DEADLINE, run_in_thread

    counter = client.Counter(path)
    counter += 1
    suspended = threading.Event()
    client.add_listener(lambda state: suspended.set() if state == "SUSPENDED" else None)
    session_id = client.client_id[0]
    harness.partition(session_id)
    try:
        assert suspended.wait(DEADLINE), "the client saw the partition"
        pending = run_in_thread(lambda: counter + 1)  # sent while the connection is down
    finally:
        harness.heal(session_id)
    pending.result(DEADLINE)
    assert counter.post_value == 2
    harness.expire(client.client_id[0])
    counter += 1  # on the client's next session, as kazoo's retry would
    assert counter.post_value == 3 and kz.get(path)[0] == b"3"


def test_compare_and_set_sets_only_from_the_value_expected_against_kazoos_changes(client, kz, path):
    ours, theirs = client.Counter(path), KazooCounter(kz, path)
    assert ours.compare_and_set(0, 7) is True and theirs.value == 7
    theirs += 1
    assert ours.compare_and_set(7, 9) is False and kz.get(path)[0] == b"8"
    assert ours.pre_value is None, "pre_value and post_value are the changes'"
    with pytest.raises(TypeError):
        ours.compare_and_set(8, 1.5)
    curator = client.Counter(path + "/c", support_curator=True)
    with pytest.raises(ValueError):
        curator.compare_and_set(0, 1 << 31)
    assert curator.compare_and_set(0, -2) and kz.get(path + "/c")[0] == b"\xff\xff\xff\xfe"
