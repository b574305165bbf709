"""The tests of the server's own HTTP protocol run on uvloop, as `serve` runs (the rest of the suite on asyncio's
loop): pytest-asyncio asks this hook for the loops of the tests under this folder only."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest
import uvloop


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> Mapping[str, Callable[[], Any]]:  # noqa: ARG001
    return {"uvloop": uvloop.new_event_loop}
