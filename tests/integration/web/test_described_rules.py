"""What the API description states is what the service does: the defects the conformance run of /openapi.json
found (tests/e2e/conformance), each pinned here. On SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest

from doctordesk.domain.inputs import MULTI_LINE_TEXT_PATTERN, TEXT_PATTERN
from tests.integration.web.test_strict_inputs import assert_invalid
from tests.support import openapi
from tests.support.integration import make_key
from tests.support.review import REQUESTED, aid, approve_url, card, snapshot

# --- a fixed path beside a templated one is its own resource ---------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/profile/admin/users/create", {"POST"}),
        ("PUT", "/profile/admin/users/filter", {"PATCH"}),
        ("GET", "/integration/v1/appointment-requests", {"POST"}),
        ("DELETE", "/admin/users", {"GET", "HEAD", "POST"}),
    ],
)
async def test_a_wrong_method_on_a_fixed_path_is_405_with_that_paths_methods(
    client, login, demo, method, path, allowed
):
    admin = await login("admin")
    response = await client.request(method, path, headers=admin.headers)
    assert response.status_code == 405, response.text
    assert response.json()["code"] == "METHOD_NOT_ALLOWED"
    assert set(response.headers["allow"].split(", ")) == allowed


# --- headers -----------------------------------------------------------------------------------------------------


async def test_an_empty_layout_header_is_refused_not_read_as_desktop(client, login, demo):
    doctor = await login("doctor1")
    assert_invalid(await client.put("/profile/appointments", headers={**doctor.headers, "X-Layout": ""}), "X-Layout")


@pytest.mark.parametrize(("header", "parameter"), [("tab-1", ""), ("tab-1", "bad id!"), ("", "tab-1")])
async def test_the_stream_judges_both_client_ids_when_both_are_sent(client, login, demo, header, parameter):
    doctor = await login("doctor1")
    headers = {"Authorization": doctor.headers["Authorization"], "X-Client-Id": header}
    response = await client.get("/profile/stream", params={"client": parameter}, headers=headers)
    assert_invalid(response, "X-Client-Id")


async def test_an_api_key_beside_another_authorization_is_refused(client, login, demo):
    admin = await login("admin")
    key = await make_key(client, admin.headers)
    path = "/integration/v1/free-times?doctor=1&location=1&from=2026-11-24&to=2026-11-25"
    assert (await client.get(path, headers={"X-Api-Key": key.key})).status_code == 200
    for other in ("Basic Zm9vOmJhcg==", "Bearer ddk_other", "garbage"):
        refused = await client.get(path, headers={"X-Api-Key": key.key, "Authorization": other})
        assert refused.status_code == 401, (other, refused.text)
    same = await client.get(path, headers={"X-Api-Key": key.key, "Authorization": f"Bearer {key.key}"})
    assert same.status_code == 200


# --- form fields -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["on", "1", "yes", "TRUE", " true", ""])
async def test_a_yes_no_field_is_true_or_false_exactly_and_a_refusal_writes_nothing(
    client, login, demo, runtime, value
):
    doctor = await login("doctor1")
    a = aid(demo, REQUESTED)
    before = await snapshot(runtime, a)
    disclaimer = await client.patch(
        f"{approve_url(a)}/disclaimer", headers=doctor.headers, data={"disclaimer-displayed": value}
    )
    assert_invalid(disclaimer, "disclaimer-displayed")
    form = {**card(1, demo.users["doctor1"], demo.locations["berlin"], "2026-11-26", "10:00"), "version": "1"}
    approve = await client.post(approve_url(a), headers=doctor.headers, data={**form, "disclaimer-displayed": value})
    assert_invalid(approve, "disclaimer-displayed")
    assert await snapshot(runtime, a) == before
    accepted = await client.patch(
        f"{approve_url(a)}/disclaimer", headers=doctor.headers, data={"disclaimer-displayed": "true"}
    )
    assert accepted.status_code == 200, accepted.text


async def test_a_time_zone_outside_the_iana_list_is_refused(client, login, demo):
    admin = await login("admin")
    for zone in ("posix/Europe/Berlin", "Mars/Olympus", "europe/berlin"):
        refused = await client.post(
            "/admin/locations", headers=admin.headers, json={"name": "X", "address": "Y", "timezone": zone}
        )
        assert_invalid(refused, "timezone")
    ok = await client.post(
        "/admin/locations", headers=admin.headers, json={"name": "X", "address": "Y", "timezone": "Europe/Vienna"}
    )
    assert ok.status_code in (200, 201), ok.text


# --- JSON bodies and query instants -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"rules": [], "confirm": 0}, "confirm"),
        ({"rules": [], "confirm": "true"}, "confirm"),
        ({"rules": [{"weekday": "1", "opens": "08:00", "closes": "12:00"}]}, "rules.0.weekday"),
        ({"rules": [{"weekday": 1.0, "opens": "08:00", "closes": "12:00"}]}, "rules.0.weekday"),
        ({"rules": [{"weekday": 1, "opens": 0, "closes": "12:00"}]}, "rules.0.opens"),
    ],
)
async def test_a_json_body_takes_jsons_own_types(client, login, demo, runtime, body, field):
    admin = await login("admin")
    doctor, location = demo.users["doctor1"], demo.locations["berlin"]
    before = await client.get(f"/admin/doctors/{doctor}/hours", headers=admin.headers)
    response = await client.put(f"/admin/doctors/{doctor}/hours/{location}", headers=admin.headers, json=body)
    assert_invalid(response, field)
    assert (await client.get(f"/admin/doctors/{doctor}/hours", headers=admin.headers)).json() == before.json()


async def test_a_policy_date_given_as_a_number_is_refused(client, login, demo):
    admin = await login("admin")
    patient = demo.patients["patient2"]
    body = {"insurer": "A", "policy_number": "1", "valid_from": 0, "valid_to": "2027-01-01"}
    assert_invalid(
        await client.post(f"/admin/patients/{patient}/policies", headers=admin.headers, json=body), "valid_from"
    )


@pytest.mark.parametrize("value", ["0.5", "0", "2026-11-24", "2026-11-24T10:00:00", "2026-11-24T10:00Z"])
async def test_an_instant_in_a_query_is_rfc_3339_with_an_offset(client, login, demo, value):
    admin = await login("admin")
    assert_invalid(await client.get("/admin/audit", params={"to": value}, headers=admin.headers), "to")
    assert_invalid(await client.get("/admin/fees", params={"at": value}, headers=admin.headers), "at")
    for good in ("2026-11-24T10:00:00Z", "2026-11-24T10:00:00.5+01:00"):
        assert (await client.get("/admin/audit", params={"to": good}, headers=admin.headers)).status_code == 200
        assert (await client.get("/admin/fees", params={"at": good}, headers=admin.headers)).status_code == 200


# --- the description itself --------------------------------------------------------------------------------------


def _text_fields(spec: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every text property of every request body (form and JSON), with where it is."""
    schemas = spec["components"]["schemas"]
    found: list[tuple[str, dict[str, Any]]] = []

    def walk(schema: dict[str, Any], where: str) -> None:
        if "$ref" in schema:
            walk(schemas[schema["$ref"].rsplit("/", 1)[-1]], where)
            return
        for option in schema.get("anyOf", []):
            walk(option, where)
        if schema.get("type") == "string" and schema.get("format") != "binary":
            found.append((where, schema))
        for name, field in schema.get("properties", {}).items():
            walk(field, f"{where}.{name}")
        if isinstance(schema.get("items"), dict):
            walk(schema["items"], f"{where}[]")

    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            for media, content in operation.get("requestBody", {}).get("content", {}).items():
                walk(content["schema"], f"{method.upper()} {path} {media}")
    return found


def test_every_text_field_of_every_request_body_states_its_rule():
    spec = openapi.description()
    fields = _text_fields(spec)
    assert len(fields) > 50
    loose = [where for where, schema in fields if not {"pattern", "enum", "format", "const"} & set(schema)]
    assert loose == []
    patterns = {schema.get("pattern") for _, schema in fields}
    assert TEXT_PATTERN in patterns and MULTI_LINE_TEXT_PATTERN in patterns


def test_the_stream_describes_each_event_as_it_sends_it():
    spec = openapi.description()
    schema = spec["paths"]["/profile/stream"]["get"]["responses"]["200"]["content"]["text/event-stream"]["schema"]
    assert schema["type"] == "object" and set(schema["required"]) == {"id", "data"}
    assert schema["properties"]["id"]["pattern"] == "^[0-9]+-[0-9]+$"


def test_the_administration_reads_document_their_403():
    spec = openapi.description()
    for path in ("/admin/audit", "/admin/audit/export", "/admin/service-accounts"):
        assert "403" in spec["paths"][path]["get"]["responses"], path
