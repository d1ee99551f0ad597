#!/usr/bin/env python3
"""Runs every fenced code block of the documentation against one real
ZooKeeper server, so that no example can rot: README.md, ARCHITECTURE.md,
core/README.md, cli/README.md (the CLI archive's) and docs/*.md (docs/README.md, "How these pages are tested").

A block's info string says what it is; a fence without one, or with one not
below, fails the run before anything runs.

- ``rust``: a whole program that is a file of core/examples/, byte for byte.
  cargo builds the examples once (a warning in one fails the run), and the
  example runs.
- ``python``: a whole script, run by .venv's Python (zoolock installed) with
  warnings as errors.
- ``csharp``: a whole program, compiled by mcs (dotnet/mcs.rsp: C# 7.2,
  warnings as errors) against the ZooLock assembly, run under mono.
- ``c``: a whole program, compiled by gcc (C99, every warning an error)
  against ffi/include/zoolock.h and linked with libzoolock_ffi.so, run.
- ``sh``: run by ``bash -e -o pipefail``, with the ``zoolock`` command first
  on PATH.
- Shown, not run: ``text`` (output, diagrams), ``toml`` and ``ini``
  (configuration), ``json`` (parsed here), ``console`` (commands the test
  command runs elsewhere: each ``$`` line's program must exist).

Every block that runs gets the same environment: its own empty directory
holding the client's TLS files (``ca.pem``, ``client.pem``, ``client.key``),
and its own chroot on the server, so that blocks neither see each other's
nodes nor depend on their order:

- ``ZOOKEEPER`` and ``ZOOLOCK_CONNECT``: ``127.0.0.1:port/docs/<block>``;
- ``ZOOKEEPER_TLS``: the server's secureClientPort, ``localhost:port/docs/<block>``
  (client certificates required);
- ``ZOOLOCK_KEYFILE_PASSWORD``: ``client.key``'s password;
- ``ZOOLOCK_SASL_PASSWORD``: the password of the server's SASL user ``locker``
  (SASL DIGEST-MD5 is offered, not required).

Usage: doc-blocks.py [FILE...]   (default: every documentation file)
Expects what scripts/test-docs.sh builds: target/debug/{zkh,zoolock},
target/debug/libzoolock_ffi.so, .venv, and ZOOLOCK_DOCS_DOTNET naming a
folder with ZooLock.dll and the native library.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "tests"))
from zkh import Harness  # noqa: E402  (python/tests/zkh.py, the suites' harness client)

RUN = ("rust", "python", "csharp", "c", "sh")
SHOWN = ("text", "toml", "ini", "json", "console")
#: Seconds one block may take, compile included.
BLOCK_TIMEOUT = 120
SASL_USER, SASL_PASSWORD = "locker", "docs-sasl-pw"
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
WORK = TARGET / "docs"

FENCE = re.compile(r"^( {0,3}|\s*)(`{3,}|~{3,})(.*)$")


class Block:
    def __init__(self, path: Path, line: int, info: str, text: str):
        self.path, self.line, self.info, self.text = path, line, info, text
        self.lang = info.split()[0] if info.split() else ""

    @property
    def where(self) -> str:
        return f"{_shown_path(self.path)}:{self.line}"

    @property
    def slug(self) -> str:
        return re.sub(r"[^A-Za-z0-9.]+", "-", f"{_shown_path(self.path)}-{self.line}")


def _shown_path(path: Path) -> str:
    """The path from the repository's root, or whole when outside it (the self-test's page)."""
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def doc_files() -> list:
    files = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", ROOT / "core" / "README.md", ROOT / "cli" / "README.md"]
    files += sorted((ROOT / "docs").glob("**/*.md"))
    return [f for f in files if f.exists()]


def blocks_of(path: Path) -> list:
    """The fenced blocks of one Markdown file (CommonMark fences, also
    indented in list items: the fence's indentation is taken off each line)."""
    blocks, lines = [], path.read_text(encoding="utf-8").split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or (m.group(2)[0] == "`" and "`" in m.group(3)):
            i += 1
            continue
        indent, fence, info = len(m.group(1)), m.group(2), m.group(3).strip()
        start, body = i + 1, []
        i += 1
        while i < len(lines):
            close = re.match(r"^\s*(`{3,}|~{3,})\s*$", lines[i])
            if close and close.group(1)[0] == fence[0] and len(close.group(1)) >= len(fence):
                break
            line = lines[i]
            body.append(line[min(indent, len(line) - len(line.lstrip(" "))):])
            i += 1
        else:
            raise SystemExit(f"{path.relative_to(ROOT)}:{start}: a fence that never closes")
        blocks.append(Block(path, start, info, "\n".join(body) + "\n"))
        i += 1
    return blocks


def fail(message: str) -> None:
    print(f"docs: {message}", file=sys.stderr)


def run(args, block: Block, cwd: Path, env: dict, stdin=None):
    """Runs one program of a block in a process group of its own; kills the
    group when it outlives BLOCK_TIMEOUT. Returns (status, output)."""
    proc = subprocess.Popen(
        args, cwd=cwd, env=env, stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )
    try:
        out, _ = proc.communicate(stdin, timeout=BLOCK_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return -1, out + f"\n(killed after {BLOCK_TIMEOUT} s)"
    # Whatever a block left running in its group (a forgotten `&`) goes too.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return proc.returncode, out


class Runner:
    def __init__(self, harness: Harness):
        self.harness = harness
        self.examples = {}  # example name -> (source, executable)
        self.tls = WORK / "tls"

    # -- once per run ----------------------------------------------------------

    def prepare(self, langs: set) -> None:
        shutil.rmtree(WORK / "run", ignore_errors=True)
        self.tls.mkdir(parents=True, exist_ok=True)
        files = self.harness.tls_files
        for name, source in (("ca.pem", "ca"), ("client.pem", "client_cert"), ("client.key", "client_key_encrypted")):
            shutil.copyfile(files[source], self.tls / name)
        self.key_password = files["client_key_password"]
        if "rust" in langs:
            self.build_examples()

    def build_examples(self) -> None:
        """Builds core/examples once; a warning in an example fails the run."""
        out = subprocess.run(
            ["cargo", "build", "--locked", "-q", "-p", "zoolock", "--examples", "--message-format=json"],
            cwd=ROOT, stdout=subprocess.PIPE, check=True, text=True,
        ).stdout
        warnings = []
        for line in out.splitlines():
            msg = json.loads(line)
            if msg.get("target", {}).get("kind") != ["example"]:
                continue
            if msg["reason"] == "compiler-artifact" and msg.get("executable"):
                src = Path(msg["target"]["src_path"])
                self.examples[msg["target"]["name"]] = (src.read_text(encoding="utf-8"), msg["executable"])
            elif msg["reason"] == "compiler-message" and msg["message"]["level"] == "warning":
                warnings.append(msg["message"]["rendered"])
        if warnings:
            raise SystemExit("docs: core/examples build with warnings:\n" + "".join(warnings))

    # -- per block -------------------------------------------------------------

    def environment(self, block: Block) -> tuple:
        chroot = f"/docs/{block.slug}"
        self.harness.call("create", path=chroot)
        cwd = WORK / "run" / block.slug
        cwd.mkdir(parents=True)
        for f in self.tls.iterdir():
            shutil.copyfile(f, cwd / f.name)
        (cwd / "client.key").chmod(0o600)
        env = {
            "PATH": f"{TARGET / 'debug'}:{os.environ['PATH']}",
            "HOME": str(cwd),
            "LANG": "C.UTF-8",
            "TMPDIR": str(cwd),
            "ZOOKEEPER": self.harness.connect + chroot,
            "ZOOLOCK_CONNECT": self.harness.connect + chroot,
            "ZOOKEEPER_TLS": self.harness.secure + chroot,
            "ZOOLOCK_KEYFILE_PASSWORD": self.key_password,
            "ZOOLOCK_SASL_PASSWORD": SASL_PASSWORD,
        }
        return cwd, env

    def rust(self, block: Block, cwd: Path, env: dict):
        for name, (source, executable) in sorted(self.examples.items()):
            if source == block.text:
                return run([executable], block, cwd, env)
        near = max(self.examples, key=lambda n: _common_lines(self.examples[n][0], block.text), default=None)
        hint = f"; nearest: core/examples/{near}.rs (first difference at its line " \
               f"{_common_lines(self.examples[near][0], block.text) + 1})" if near else ""
        return 1, f"this block is no file of core/examples/, byte for byte{hint}"

    def python(self, block: Block, cwd: Path, env: dict):
        script = cwd / "block.py"
        script.write_text(block.text, encoding="utf-8")
        return run([str(ROOT / ".venv" / "bin" / "python"), "-W", "error", str(script)], block, cwd, env)

    def csharp(self, block: Block, cwd: Path, env: dict):
        dotnet = Path(os.environ["ZOOLOCK_DOCS_DOTNET"])
        source = cwd / "Block.cs"
        source.write_text(block.text, encoding="utf-8")
        # Beside ZooLock.dll, where mono looks for it and it looks for the native library.
        exe = dotnet / f"{block.slug}.exe"
        status, out = run(["mcs", f"@{ROOT / 'dotnet' / 'mcs.rsp'}", f"-r:{dotnet / 'ZooLock.dll'}",
                           f"-out:{exe}", str(source)], block, cwd, env)
        if status != 0:
            return status, "mcs:\n" + out
        return run(["mono", "--debug", str(exe)], block, cwd, env)

    def c(self, block: Block, cwd: Path, env: dict):
        source, program = cwd / "block.c", cwd / "block"
        source.write_text(block.text, encoding="utf-8")
        lib = TARGET / "debug"
        status, out = run(["gcc", "-std=c99", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror", "-pedantic",
                           "-I", str(ROOT / "ffi" / "include"), str(source), "-o", str(program),
                           "-L", str(lib), "-lzoolock_ffi", f"-Wl,-rpath,{lib}"], block, cwd, env)
        if status != 0:
            return status, "gcc:\n" + out
        return run([str(program)], block, cwd, env)

    def sh(self, block: Block, cwd: Path, env: dict):
        script = cwd / "block.sh"
        script.write_text(block.text, encoding="utf-8")
        return run(["bash", "-e", "-o", "pipefail", str(script)], block, cwd, env)


def _common_lines(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.split("\n"), b.split("\n")):
        if x != y:
            break
        n += 1
    return n


def check_shown(block: Block) -> str:
    """What is wrong with a block that is shown, not run; '' if nothing."""
    if block.lang == "json":
        try:
            json.loads(block.text)
        except ValueError as e:
            return f"not JSON: {e}"
    if block.lang == "console":
        for line in block.text.splitlines():
            if line.startswith("$ "):
                program = line[2:].split()[0]
                if not ((ROOT / program).is_file() and os.access(ROOT / program, os.X_OK)) and not shutil.which(program):
                    return f"`{program}` is neither an executable of the repository nor on PATH"
    return ""


def unrun(blocks: list) -> list:
    """The blocks that would be neither run nor shown: one message each."""
    messages = []
    for b in blocks:
        if b.lang not in RUN + SHOWN:
            shown = f"```{b.info}" if b.info else "``` without an info string"
            messages.append(f"{b.where}: {shown}: say what the block is"
                            f" ({', '.join(RUN)} run; {', '.join(SHOWN)} are shown)")
    return messages


SELF_TEST = """\
# A page

```python
print("a")
```

1. In a list:

   ```sh
   echo b
   ```

~~~csharp
class C {}
~~~

````text
```rust
not a block of its own
```
````

Inline ```code``` is no fence.

```
untagged
```

```bash
another language
```
"""


def self_test() -> None:
    """The extractor finds every kind of fence in a page, and a block
    without a tag the runner knows is refused: if either breaks, a block
    could be skipped unseen."""
    page = WORK / "self-test" / "page.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(SELF_TEST, encoding="utf-8")
    found = [(b.line, b.lang, b.text) for b in blocks_of(page)]
    expected = [
        (3, "python", 'print("a")\n'),
        (9, "sh", "echo b\n"),
        (13, "csharp", "class C {}\n"),
        (17, "text", "```rust\nnot a block of its own\n```\n"),
        (25, "", "untagged\n"),
        (29, "bash", "another language\n"),
    ]
    assert found == expected, f"the extractor found {found}, not {expected}"
    refused = unrun(blocks_of(page))
    assert len(refused) == 2 and ":25:" in refused[0] and ":29:" in refused[1], refused


LINK = re.compile(r"\]\(([^)\s]+)\)")


def dead_links(path: Path, blocks: list) -> list:
    """Relative links of a page (outside its code blocks) to files that do not exist."""
    inside = set()
    for b in blocks:
        inside.update(range(b.line, b.line + b.text.count("\n") + 2))
    messages = []
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if number in inside:
            continue
        for target in LINK.findall(line):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            if not (path.parent / target.split("#")[0]).exists():
                messages.append(f"{_shown_path(path)}:{number}: a link to {target}, which does not exist")
    return messages


def main(argv) -> int:
    started = time.monotonic()
    self_test()
    files = [Path(a).resolve() for a in argv] or doc_files()
    blocks = [b for f in files for b in blocks_of(f)]
    bad = unrun(blocks)
    for f in files:
        bad += dead_links(f, [b for b in blocks if b.path == f])
    for message in bad:
        fail(message)
    failed = len(bad)
    for b in blocks:
        if b.lang in SHOWN and (problem := check_shown(b)):
            fail(f"{b.where}: {problem}")
            failed += 1
    if failed:
        return 1

    to_run = [b for b in blocks if b.lang in RUN]
    counts = {lang: sum(b.lang == lang for b in to_run) for lang in RUN}
    with Harness(servers=1, tick_ms=200, tls={"client_auth": True},
                 sasl={"users": {SASL_USER: SASL_PASSWORD}, "required": False}) as harness:
        runner = Runner(harness)
        runner.prepare({b.lang for b in to_run})
        for b in to_run:
            t = time.monotonic()
            cwd, env = runner.environment(b)
            status, out = getattr(runner, b.lang)(b, cwd, env)
            took = time.monotonic() - t
            if status == 0:
                print(f"ok     {b.where} ({b.lang}, {took:.1f} s)")
            else:
                failed += 1
                print(f"FAILED {b.where} ({b.lang}, {took:.1f} s, status {status})")
                print("  " + out.rstrip().replace("\n", "\n  "))
    shown = len(blocks) - len(to_run)
    summary = ", ".join(f"{lang} {n}" for lang, n in counts.items())
    print(f"docs: {len(to_run) - failed} passed, {failed} failed ({summary}; {shown} shown, not run)"
          f" in {time.monotonic() - started:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
