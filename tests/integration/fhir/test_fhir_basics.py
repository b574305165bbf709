"""The FHIR interface's edge: the CapabilityStatement, authentication by API key and user token, and errors as
OperationOutcome with FHIR's statuses (SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest

from doctordesk.services.fhir.capability import SUPPORTED
from doctordesk.web.routers.fhir import bulk as fhir_bulk_router
from doctordesk.web.routers.fhir import routes as fhir_router
from tests.support.fhir import FHIR_JSON, assert_outcome, resource_of
from tests.support.integration import make_key


@pytest.fixture
async def key(client, login):
    return await make_key(client, (await login("admin")).headers)


async def test_the_capability_statement_is_valid_r4_and_lists_exactly_the_served_interactions(client):
    statement = resource_of(await client.get("/fhir/metadata"))
    assert statement["fhirVersion"] == "4.0.1" and statement["kind"] == "instance"
    listed = {r["type"]: {i["code"] for i in r["interaction"]} for r in statement["rest"][0]["resource"]}
    served: dict[str, set[str]] = {}
    for route in [*fhir_router.router.routes, *fhir_bulk_router.router.routes]:
        path, methods = route.path, route.methods  # type: ignore[attr-defined]
        parts = path.removeprefix("/fhir/").split("/")
        if parts[0] not in SUPPORTED or parts[-1].startswith("$"):
            continue  # operations are listed apart
        on_instance = len(parts) == 2
        for method in methods:
            if len(parts) > 2:
                served.setdefault(parts[0], set()).add("vread" if len(parts) == 4 else "history-instance")
                continue
            kind = {
                ("GET", True): "read",
                ("PUT", True): "update",
                ("DELETE", True): "delete",
                ("GET", False): "search-type",
                ("POST", False): "create",
            }[(method, on_instance)]
            served.setdefault(parts[0], set()).add(kind)
    assert listed == served
    params = {r["type"]: {p["name"] for p in r.get("searchParam", [])} for r in statement["rest"][0]["resource"]}
    assert params["Appointment"] == {
        "_id", "_lastUpdated", "identifier", "date", "status", "service-type", "actor", "patient", "practitioner",
        "location",
    }  # fmt: skip
    assert params["Patient"] == {"_id", "identifier", "name", "family", "given", "birthdate"}
    assert params["Practitioner"] == {"_id", "identifier", "name"}
    assert listed["Subscription"] == {"read", "search-type", "create", "update", "delete"}
    operations = {r["type"]: {o["name"] for o in r.get("operation", [])} for r in statement["rest"][0]["resource"]}
    served_operations: dict[str, set[str]] = {}
    for route in fhir_router.router.routes:
        parts = route.path.removeprefix("/fhir/").split("/")  # type: ignore[attr-defined]
        if parts[0] in SUPPORTED and parts[-1].startswith("$"):
            served_operations.setdefault(parts[0], set()).add(parts[-1].removeprefix("$"))
    assert all(served <= operations[kind] for kind, served in served_operations.items())  # each one listed
    [patient] = [r for r in statement["rest"][0]["resource"] if r["type"] == "Patient"]
    assert {"name": "everything", "definition": "http://hl7.org/fhir/OperationDefinition/Patient-everything"} in (
        patient["operation"]
    )
    assert params["Subscription"] == {"status"}


async def test_no_credentials_is_401_as_an_operation_outcome(client, demo):
    response = await client.get("/fhir/Appointment")
    assert_outcome(response, 401, "UNAUTHORIZED")
    assert response.headers["www-authenticate"] == "Bearer"


async def test_an_unknown_api_key_and_an_unknown_token_are_401(client, demo):
    for token in ("ddk_" + "x" * 43, "not-a-token"):
        response = await client.get("/fhir/Appointment", headers={"Authorization": f"Bearer {token}"})
        assert_outcome(response, 401, "UNAUTHORIZED")


async def test_api_keys_and_user_tokens_are_both_accepted(client, key, login):
    doctor = await login("doctor1")
    for headers in (key.headers, {"X-Api-Key": key.key}, doctor.headers):
        assert resource_of(await client.get("/fhir/Appointment", headers=headers))["type"] == "searchset"


async def test_an_unknown_resource_type_is_404_and_an_unsupported_interaction_405(client, key, demo):
    assert_outcome(await client.get("/fhir/Observation", headers=key.headers), 404, "NOT_SUPPORTED")
    assert_outcome(
        await client.delete(f"/fhir/Appointment/{demo.appointments[0]}", headers=key.headers), 405, "NOT_SUPPORTED"
    )


async def test_a_malformed_or_unknown_id_is_404(client, key):
    for raw in ("abc", "0", "99999999", "1.5"):
        assert_outcome(await client.get(f"/fhir/Appointment/{raw}", headers=key.headers), 404, "NOT_FOUND")


async def test_answers_are_fhir_json(client, key, demo):
    response = await client.get(f"/fhir/Appointment/{demo.appointments[0]}", headers=key.headers)
    assert response.headers["content-type"].startswith(FHIR_JSON)


@pytest.mark.parametrize("accept", ["application/fhir+xml", "application/xml", "text/html", "application/json;q=0"])
async def test_an_accept_header_without_json_is_406(client, key, accept):
    response = await client.get("/fhir/metadata", headers={"Accept": accept})
    assert_outcome(response, 406, "NOT_SUPPORTED")
    search = await client.get("/fhir/Practitioner", headers={**key.headers, "Accept": accept})
    assert_outcome(search, 406, "NOT_SUPPORTED")


@pytest.mark.parametrize("accept", ["application/fhir+xml, application/fhir+json;q=0.5", "*/*", "application/json"])
async def test_an_accept_header_naming_json_is_served(client, accept):
    resource_of(await client.get("/fhir/metadata", headers={"Accept": accept}))


async def test_a_body_over_the_service_limit_is_a_413_operation_outcome(client, key):
    huge = b"{" + b" " * (12 * 1024 * 1024) + b"}"
    response = await client.post("/fhir/Appointment", content=huge, headers={**key.headers, "Content-Type": FHIR_JSON})
    assert_outcome(response, 413, "PAYLOAD_TOO_LARGE")


@pytest.mark.parametrize("body", [b"not json", b'{"resourceType": "Patient"}', b'{"resourceType": "Appointment"}'])
async def test_callers_who_may_not_create_are_403_whatever_the_body(client, login, body):
    doctor = await login("doctor1")
    for path in ("/fhir/Appointment", "/fhir/AppointmentResponse"):
        response = await client.post(path, content=body, headers={**doctor.headers, "Content-Type": FHIR_JSON})
        assert_outcome(response, 403, "FORBIDDEN")
    patient = await login("patient1")
    response = await client.post(
        "/fhir/Subscription", content=body, headers={**patient.headers, "Content-Type": FHIR_JSON}
    )
    assert_outcome(response, 403, "FORBIDDEN")
