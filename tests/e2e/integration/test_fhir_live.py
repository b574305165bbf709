"""The FHIR interface against a real server: the curl walkthrough of docs/fhir.md runs as written (request, the
doctor's alternatives on the screen, the patient's answer, errors)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.live import LiveServer, serving
from tests.support.walkthrough import run_walkthrough

DOC = Path(__file__).parents[3] / "docs" / "fhir.md"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with serving(tmp_path_factory.mktemp("fhir")) as live:
        yield live


@pytest.mark.skipif(not (shutil.which("curl") and shutil.which("jq")), reason="needs curl and jq")
def test_the_fhir_curl_walkthrough_runs_as_written(server: LiveServer) -> None:
    result = run_walkthrough(DOC, server.url, min_curls=15)
    assert result.returncode == 0, result.stdout + result.stderr
