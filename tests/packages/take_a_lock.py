"""The installed wheel, as a user without Rust runs it: `import zoolock`
from site-packages, a lock taken and handed over against a real ZooKeeper.

python take_a_lock.py HOSTS
"""

import sys

import zoolock
from zoolock import KazooClient

hosts = sys.argv[1]
if "site-packages" not in zoolock.__file__:
    sys.exit(f"zoolock was imported from {zoolock.__file__}, not from the installed wheel")

zk = KazooClient(hosts=hosts, timeout=10.0)
zk.start()
first = zk.Lock("/zoolock-wheel/lock", "first")
second = zk.Lock("/zoolock-wheel/lock", "second")
if not first.acquire(timeout=10):
    sys.exit("the first contender did not get a free lock")
token = first.fencing_token
if not token or token <= 0:
    sys.exit(f"no fencing token while holding: {token!r}")
if second.acquire(blocking=False):
    sys.exit("a second contender got the lock while it was held")
first.release()
if not second.acquire(timeout=10):
    sys.exit("the second contender did not get the lock after its release")
later = second.fencing_token
if not later or later <= token:
    sys.exit(f"fencing tokens did not increase: {token} then {later!r}")
second.release()
zk.stop()
zk.close()
print(f"wheel: zoolock from {zoolock.__file__} took and handed over a lock (tokens {token} < {later})")
