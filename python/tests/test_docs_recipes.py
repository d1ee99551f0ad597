"""docs/recipes.md's Python examples run as written, each in a chroot of its own."""

import re
import uuid
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "recipes.md"
EXAMPLES = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def test_there_are_examples():
    assert len(EXAMPLES) >= 2


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: re.findall(r"client\.([A-Z]\w+)\(", e)[0])
def test_example_runs(example, connect):
    hosts = f"{connect}/zoolock-docs-{uuid.uuid4().hex[:8]}"
    assert '"127.0.0.1:2181"' in example
    exec(compile(example.replace('"127.0.0.1:2181"', repr(hosts)), str(DOC), "exec"), {})
