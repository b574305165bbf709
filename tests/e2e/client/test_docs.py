"""The usage example of docs/client-sdk.md runs as written against a real server."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

DOC = Path(__file__).parents[3] / "docs" / "client-sdk.md"


def example_source() -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    return next(b for b in blocks if "async def example(" in b)


async def test_the_documented_example_runs(shared_server, capsys) -> None:
    namespace: dict[str, Any] = {}
    exec(compile(example_source(), str(DOC), "exec"), namespace)
    await namespace["example"](shared_server.url)
    out = capsys.readouterr().out
    assert "logged in as Dr. Anna Berger" in out
    assert "Awaiting your decision" in out
