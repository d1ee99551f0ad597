"""A kazoo peer for core/tests/invariant.rs.

One kazoo client with a WriteLock and a ReadLock on the lock path and a
Semaphore on the semaphore path (handles 0, 1, 2). Commands arrive as JSON
lines on stdin, each run on a thread of its own so that a waiting acquire
never holds up a release; each is answered by one JSON line on stdout:

  {"id": 1, "cmd": "acquire", "handle": 0, "timeout": 1.5}
  -> {"id": 1, "op": "acquire", "handle": 0, "ok": true, "held": true, "node": "/p/..", "token": 4294967300}
  {"id": 2, "cmd": "release", "handle": 0}  -> {"id": 2, "op": "release", "ok": true, "released": true}

The first line says whether kazoo is there: {"ready": true, "session": id}
or {"ready": false, "error": "..."}. The peer exits when stdin closes.
"""

import json
import sys
import threading

try:
    from kazoo.client import KazooClient
    from kazoo.exceptions import LockTimeout
except ImportError as error:  # the test skips the peer and says why
    print(json.dumps({"ready": False, "error": f"kazoo is not importable: {error}"}), flush=True)
    sys.exit(0)

hosts, lock_path, sem_path, max_leases = sys.argv[1:5]
client = KazooClient(hosts=hosts, timeout=10.0)
client.start(timeout=30)
handles = [
    client.WriteLock(lock_path, "kazoo.write"),
    client.ReadLock(lock_path, "kazoo.read"),
    client.Semaphore(sem_path, "kazoo.sem", max_leases=int(max_leases)),
]
out = threading.Lock()


def say(reply):
    with out:
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def node_of(k):
    handle = handles[k]
    if k == 2:
        return handle.create_path
    return f"{handle.path}/{handle.node}" if handle.node else None


def run(command):
    k = command.get("handle")
    reply = {"id": command.get("id"), "op": command["cmd"], "handle": k}
    try:
        if command["cmd"] == "acquire":
            try:
                held = handles[k].acquire(timeout=command["timeout"])
            except LockTimeout:
                held = False
            reply["held"] = bool(held)
            if held:
                node = node_of(k)
                stat = client.exists(node)
                reply["node"] = node
                reply["token"] = stat.czxid if stat else None
        elif command["cmd"] == "release":
            reply["released"] = bool(handles[k].release())
        reply["ok"] = True
    except Exception as error:  # reported to the test, which logs it
        reply["ok"] = False
        reply["error"] = f"{type(error).__name__}: {error}"
    say(reply)


say({"ready": True, "session": str(client.client_id[0])})
for line in sys.stdin:
    if line.strip():
        threading.Thread(target=run, args=(json.loads(line),), daemon=True).start()
client.stop()
client.close()
