"""A bulk export through a SMART app's token (docs/fhir.md#bulk-export): every exported type needs ``r`` and ``s``
in a granted scope, on top of the user's own rights; the status URL is the user's whichever token asks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from doctordesk.config import Settings
from tests.integration.smart.conftest import exchange
from tests.support.bulk import ASYNC, kick_off, manifest, resources, run_exports
from tests.support.fhir import assert_outcome


@pytest.fixture
def settings(database_url: str, settings_factory: Callable[..., Settings]) -> Settings:
    # The tests run the exporter themselves (one in the app would take the jobs first).
    return settings_factory(database_url, bulk_in_process=False)


async def _bearer(client: httpx.AsyncClient, app: Any, code: str) -> dict[str, str]:
    answer = await exchange(client, app, code)
    assert answer.status_code == 200, answer.text
    return {"Authorization": f"Bearer {answer.json()['access_token']}"}


async def test_an_admin_app_with_user_scopes_exports_only_the_types_they_allow(
    client: httpx.AsyncClient, register: Callable[..., Any], launch: Callable[..., Any], runtime: Any, login: Any
) -> None:
    scope = "user/Appointment.rs user/Patient.r"
    app = await register(scopes=scope.split(), name="Warehouse")
    headers = await _bearer(client, app, await launch(app, scope, "admin"))
    refused = await client.get("/fhir/$export", headers={**headers, **ASYNC})
    assert_outcome(refused, 403, "FORBIDDEN")  # Patient lacks s; Practitioner, Location, Group lack both
    status_url = await kick_off(client, headers, _type="Appointment")
    await run_exports(runtime)
    body = await manifest(client, headers, status_url)
    found = await resources(client, headers, body)
    assert list(found) == ["Appointment"] and found["Appointment"]
    admin = await login("admin")  # the same user's own token reads the same job
    assert (await client.get(status_url, headers=admin.headers)).status_code == 200


async def test_an_app_with_every_read_and_search_scope_exports_the_clinic(
    client: httpx.AsyncClient, register: Callable[..., Any], launch: Callable[..., Any], runtime: Any
) -> None:
    scope = "user/*.rs"
    app = await register(scopes=[scope], name="Warehouse")
    headers = await _bearer(client, app, await launch(app, scope, "support1"))
    status_url = await kick_off(client, headers)
    await run_exports(runtime)
    body = await manifest(client, headers, status_url)
    assert [o["type"] for o in body["output"]] == ["Patient", "Practitioner", "Location", "Appointment", "Group"]


async def test_a_patient_launch_may_not_export(
    client: httpx.AsyncClient, register: Callable[..., Any], launch: Callable[..., Any]
) -> None:
    scope = "launch/patient patient/*.rs"
    app = await register(scopes=scope.split())
    headers = await _bearer(client, app, await launch(app, scope))
    for path in ("/fhir/$export", "/fhir/Patient/$export"):
        assert_outcome(await client.get(path, headers={**headers, **ASYNC}), 403, "FORBIDDEN")
