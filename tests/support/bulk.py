"""Driving a FHIR bulk export in tests (docs/fhir.md#bulk-export): kick it off, run the exporter to the end, read
the manifest and every file, each line checked against the R4 models."""

from __future__ import annotations

import json
from typing import Any

import httpx

from doctordesk.runtime import Runtime
from doctordesk.workers.bulk_exporter import BulkExporter
from tests.support.fhir import FHIR_JSON
from tests.support.fhir_models import validate

ASYNC = {"Prefer": "respond-async", "Accept": FHIR_JSON}


async def kick_off(
    client: httpx.AsyncClient, headers: dict[str, str], path: str = "/fhir/$export", **params: str
) -> str:
    """The status URL of a new export (202 with ``Content-Location``)."""
    answer = await client.get(path, params=params, headers={**headers, **ASYNC})
    assert answer.status_code == 202, answer.text
    return answer.headers["content-location"]


async def run_exports(rt: Runtime) -> None:
    """Every due job written to its end (the exporter the app and ``doctordesk worker`` run)."""
    await BulkExporter(rt.db, settings=rt.settings, clock=rt.clock).drain()


async def manifest(client: httpx.AsyncClient, headers: dict[str, str], status_url: str) -> dict[str, Any]:
    answer = await client.get(status_url, headers=headers)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = answer.json()
    return body


async def file_bytes(client: httpx.AsyncClient, headers: dict[str, str], url: str) -> bytes:
    answer = await client.get(url, headers=headers)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("application/fhir+ndjson")
    return answer.content


async def resources(client: httpx.AsyncClient, headers: dict[str, str], body: dict[str, Any]) -> dict[str, list[Any]]:
    """Every resource of every file of a manifest, by type, each line a valid R4 resource of the file's type and
    each file's count its number of lines."""
    found: dict[str, list[Any]] = {}
    for output in body["output"]:
        data = await file_bytes(client, headers, output["url"])
        assert data.endswith(b"\n")
        lines = data.decode().splitlines()
        assert len(lines) == output["count"]
        for line in lines:
            resource = json.loads(line)
            assert resource["resourceType"] == output["type"]
            validate(resource)
            found.setdefault(output["type"], []).append(resource)
    return found
