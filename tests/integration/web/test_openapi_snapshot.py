"""The OpenAPI document served is byte for byte the one committed in ``openapi.snapshot.json``: moving code between
modules and packages changes no path, schema, name or description. After a deliberate API change, rewrite the
snapshot with ``DOCTORDESK_WRITE_OPENAPI_SNAPSHOT=1 pytest tests/integration/web/test_openapi_snapshot.py`` and
review its diff."""

from __future__ import annotations

import os
from pathlib import Path

SNAPSHOT = Path(__file__).with_name("openapi.snapshot.json")


async def test_openapi_document_is_the_committed_snapshot(client):
    response = await client.get("/openapi.json")
    assert response.status_code == 200
    if os.environ.get("DOCTORDESK_WRITE_OPENAPI_SNAPSHOT") == "1":
        SNAPSHOT.write_bytes(response.content)
    assert response.content == SNAPSHOT.read_bytes()
