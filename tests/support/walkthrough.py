"""A doc's curl walkthrough run as a test: its ```sh blocks, in order, as one bash script against a live server
(``$BASE``), failing on the first command that fails."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path


def shell_blocks(doc: Path) -> str:
    return "\n".join(re.findall(r"```sh\n(.*?)```", doc.read_text(encoding="utf-8"), flags=re.S))


def run_walkthrough(doc: Path, base_url: str, *, min_curls: int) -> subprocess.CompletedProcess[str]:
    """Run the doc's shell blocks against ``base_url``; the result (asserting it succeeded is the caller's)."""
    script = "set -euo pipefail\n" + shell_blocks(doc)
    assert script.count("curl") >= min_curls
    return subprocess.run(
        ["bash", "-c", script],
        env={**os.environ, "BASE": base_url},
        capture_output=True,
        text=True,
        timeout=120,
    )
