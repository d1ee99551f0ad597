"""CMD of the ensemble bed's CLI contender, run by `zoolock exec`:

    python cmd.py PATH RESOURCE NAME HOLD_MS

Says it began to hold (with zoolock's fencing token), then writes to the
resource with that token every few milliseconds, saying `held` after each
write, until HOLD_MS have passed; then says it ends (zoolock releases once
it exits). It cannot say when it is killed: its hold ends at its last `held`.
"""

import os
import socket
import sys
import time

path, resource, name, hold_ms = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
token = os.environ["ZOOLOCK_FENCING_TOKEN"]
now = time.monotonic_ns
start = now()
host, port = resource.rsplit(":", 1)
store = socket.create_connection((host, int(port)))
store.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
replies = store.makefile("r")
print(f"begin {path} {token} {start}", flush=True)
last = start
while now() - start < hold_ms * 1_000_000:
    store.sendall(f"w {name} {path} {token}\n".encode())
    replies.readline()
    last = now()
    print(f"held {path} {token} {last}", flush=True)
    time.sleep(0.003)
print(f"end {path} {token} {last} {now()} released", flush=True)
