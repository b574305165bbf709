"""The API description the service serves at /openapi.json, built once per test process for the tests that only
read it (it is the same on either database; ``tests/integration/web/test_openapi_snapshot.py`` holds the served
document to the committed snapshot on both)."""

from __future__ import annotations

import copy
import functools
import tempfile
from pathlib import Path
from typing import Any

from doctordesk.app import create_app
from doctordesk.config import Settings


@functools.cache
def _built() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="doctordesk-openapi-") as data:
        settings = Settings(database_url=f"sqlite+aiosqlite:///{Path(data) / 'unused.db'}", data_dir=Path(data))
        return create_app(settings).openapi()


def description() -> dict[str, Any]:
    """A copy of the served description (a test may change it)."""
    return copy.deepcopy(_built())
