"""The write operations' descriptions state the rules the service judges (tests/e2e/conformance runs them without a
catch-all): the bounds in /openapi.json are the service's own constants, a value just outside them is refused with
the service's own message (in the reader's language), every form a screen submits is described, and what the
screens render is what their descriptions accept. On SQLite and PostgreSQL."""

from __future__ import annotations

import re
from typing import Any

import jsonschema_rs
import pytest
from fastapi.routing import APIRoute
from starlette.routing import compile_path

from doctordesk.client.forms import collect
from doctordesk.domain.integration import IDEMPOTENCY_KEY_PATTERN
from doctordesk.domain.names import NAME_PATTERN
from doctordesk.domain.review.fees import KINDS, MAX_AMOUNT_CENTS, MAX_PERCENT
from doctordesk.domain.webhooks.rules import SUBSCRIBABLE, URL_PATTERN
from doctordesk.screens.protocol import walk
from doctordesk.services.accounts.auth import MAX_PASSWORD, MIN_PASSWORD
from doctordesk.services.admin.users import USERNAME
from doctordesk.web.deps import form_fields
from tests.integration.admin.support import counts
from tests.integration.web.test_strict_inputs import assert_invalid
from tests.support import openapi

GERMAN = {"Accept-Language": "de-DE,de;q=0.9"}


def _resolve(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _value(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """The non-null option of a (nullable) field's schema."""
    schema = _resolve(spec, schema)
    options = [o for o in schema.get("anyOf", [schema]) if o.get("type") != "null"]
    assert len(options) == 1, schema
    return _resolve(spec, options[0])


def _body(spec: dict[str, Any], method: str, path: str, media: str = "application/json") -> dict[str, Any]:
    return _resolve(spec, spec["paths"][path][method]["requestBody"]["content"][media]["schema"])


def _field(spec: dict[str, Any], method: str, path: str, name: str) -> dict[str, Any]:
    return _value(spec, _body(spec, method, path)["properties"][name])


# --- the description states the service's constants ----------------------------------------------------------


def test_the_bounds_in_the_description_are_the_services_own():
    spec = openapi.description()
    for path in ("/admin/users", "/admin/users/{user_id}/password"):
        password = _field(spec, "post", path, "password")
        assert (password["minLength"], password["maxLength"]) == (MIN_PASSWORD, MAX_PASSWORD), path
    username = _field(spec, "post", "/admin/users", "username")["pattern"]
    for name in ("bob", "Bob.Smith_2", "a" * 64, "", "-bob", "a" * 65, "bob smith", "bøb"):
        assert bool(re.search(username, name)) == bool(USERNAME.fullmatch(name.lower())), name
    assert _field(spec, "post", "/admin/fees", "kind")["enum"] == list(KINDS)
    assert _field(spec, "post", "/admin/fees", "percent")["maximum"] == MAX_PERCENT
    assert _field(spec, "post", "/admin/fees", "amount_cents")["maximum"] == MAX_AMOUNT_CENTS
    for path in ("/admin/webhooks", "/admin/webhooks/{endpoint_id}"):
        assert _field(spec, "post", path, "url")["pattern"] == URL_PATTERN
        types = _field(spec, "post", path, "event_types")
        assert types["minItems"] == 1 and _value(spec, types["items"])["enum"] == list(SUBSCRIBABLE)
    assert set(_body(spec, "post", "/admin/patients/{patient_id}/policies")["required"]) == {
        "insurer", "policy_number", "valid_from", "valid_to"
    }  # fmt: skip
    assert "required" not in _body(spec, "post", "/admin/policies/{policy_id}")
    for path, name in [
        ("/admin/locations", "name"),
        ("/admin/users", "display_name"),
        ("/admin/service-accounts", "name"),
    ]:
        assert _field(spec, "post", path, name)["pattern"] == NAME_PATTERN, path
    link = _body(spec, "post", "/auth/password-link", "application/x-www-form-urlencoded")["properties"]["password"]
    assert link["minLength"] == MIN_PASSWORD
    headers = spec["paths"]["/integration/v1/appointment-requests"]["post"]["parameters"]
    key = next(p for p in headers if p["name"].lower() == "idempotency-key")
    assert _value(spec, key["schema"])["pattern"] == IDEMPOTENCY_KEY_PATTERN


@pytest.mark.parametrize(
    ("start", "whole_minute"),
    [
        ("2026-11-30T10:00:00Z", True),
        ("2026-11-30T10:00:00.000+01:00", True),
        ("2026-11-30T10:00:30Z", False),
        ("2026-11-30T10:00:00.5Z", False),
        ("2026-11-30T24:00:00Z", False),
    ],
)
def test_an_integration_start_is_described_in_whole_minutes(start, whole_minute):
    spec = openapi.description()
    pattern = _field(spec, "post", "/integration/v1/appointment-requests", "start")["pattern"]
    assert bool(re.search(pattern, start)) is whole_minute


@pytest.mark.parametrize(
    ("url", "accepted"),
    [
        ("https://example.org/hooks?x=1", True),
        ("HTTP://hooks.example.org:8443/in", True),
        ("https://example.org:65535/", True),
        ("https://example.org:65536/", False),
        ("ftp://example.org/", False),
        ("https://example.org/#part", False),
        ("https://exa mple.org/", False),
        ("https:///path", False),
    ],
)
async def test_the_webhook_url_pattern_takes_what_the_url_check_takes(client, login, url, accepted):
    spec = (await client.get("/openapi.json")).json()
    assert bool(re.search(_field(spec, "post", "/admin/webhooks", "url")["pattern"], url)) is accepted
    admin = await login("admin")
    body = {"url": url, "event_types": ["appointment.requested"]}
    response = await client.post("/admin/webhooks", headers=admin.headers, json=body)
    assert (response.status_code == 201) is accepted, response.text


# --- the service judges, with its own message ------------------------------------------------------------------


async def test_a_password_at_the_stated_minimum_is_taken_and_one_under_it_refused_by_the_service(client, login, demo):
    admin = await login("admin")
    url = f"/admin/users/{demo.users['support1']}/password"
    short = await client.post(url, headers=admin.headers, json={"password": "x" * (MIN_PASSWORD - 1)})
    assert assert_invalid(short, "password")["fields"]["password"] == f"{MIN_PASSWORD} to {MAX_PASSWORD} characters."
    assert (await client.post(url, headers=admin.headers, json={"password": "x" * MIN_PASSWORD})).status_code == 200


@pytest.mark.parametrize(
    ("path", "body", "field", "message"),
    [
        ("/admin/fees", {"kind": "weekend", "percent": 10, "currency": "eur"}, "currency",
         "Drei Großbuchstaben (ISO 4217), z. B. EUR."),
        ("/admin/webhooks", {"url": "ftp://example.org/", "event_types": ["appointment.requested"]}, "url",
         "Verwenden Sie eine http- oder https-URL."),
        ("/admin/locations", {"name": "   ", "timezone": "Europe/Berlin"}, "name",
         "Enthält kein sichtbares Zeichen: bitte einen Buchstaben, eine Ziffer oder ein Zeichen angeben."),
    ],
)  # fmt: skip
async def test_a_value_outside_a_stated_rule_is_refused_with_the_services_message(
    client, login, runtime, path, body, field, message
):
    admin = await login("admin")
    before = await counts(runtime)
    refused = await client.post(path, headers={**admin.headers, **GERMAN}, json=body)
    assert assert_invalid(refused, field)["fields"][field] == message
    assert await counts(runtime) == before


# --- the screens' forms ----------------------------------------------------------------------------------------


def _api_routes(routes: list[Any]) -> list[APIRoute]:
    """Every operation's route, through the routers the app includes."""
    found: list[APIRoute] = []
    for route in routes:
        if isinstance(route, APIRoute):
            found.append(route)
        elif hasattr(route, "original_router"):
            found += _api_routes(route.original_router.routes)
    return found


async def test_every_form_submission_describes_its_form(app, client):
    spec = (await client.get("/openapi.json")).json()
    form_routes = [
        (method, route.path_format)
        for route in _api_routes(app.routes)
        if any(d.call is form_fields for d in route.dependant.dependencies)
        for method in route.methods
        if method == "POST"
    ]
    assert len(form_routes) >= 15
    undescribed = [f"{m} {p}" for m, p in form_routes if "requestBody" not in spec["paths"][p][m.lower()]]
    assert undescribed == []


def _on_the_wire(schema: dict[str, Any], data: dict[str, str]) -> dict[str, Any]:
    """A form as its description reads it: digits where the field takes an integer (a form sends only text)."""

    def takes_integer(field: dict[str, Any]) -> bool:
        return any(option.get("type") == "integer" for option in [field, *field.get("anyOf", [])])

    properties = schema.get("properties", {})
    return {
        name: int(value) if value.isdigit() and takes_integer(properties.get(name, {})) else value
        for name, value in data.items()
    }


def _template(spec: dict[str, Any], endpoint: str) -> str:
    """The described path of an action's endpoint (a fixed path wins over a template that also matches it)."""
    path = endpoint.split("?", 1)[0]
    if path in spec["paths"]:
        return path
    return next(t for t in spec["paths"] if compile_path(t)[0].match(path))


async def _post_actions(client, headers, page_path: str) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    page = await client.put(page_path, headers=headers)
    assert page.status_code == 200, page.text
    elements = page.json()["elements"]
    actions = [e["action"] for e in walk(elements) if e.get("action", {}).get("method") == "POST"]
    return [(a, elements) for a in actions if "form" in a]


async def test_what_the_admin_screens_render_their_descriptions_accept(client, login, demo):
    """Every POST form action on the administration screens: each field it sends is described; a form that shows a
    stored record (a save) is valid as rendered, so the web app and the SDK keep working."""
    admin = await login("admin")
    created = await client.post(
        "/admin/webhooks",
        headers=admin.headers,
        json={"url": "https://example.org/in", "event_types": ["appointment.requested"]},
    )
    pages = [
        "/profile/admin/users/new",
        f"/profile/admin/users/{demo.users['doctor1']}",
        f"/profile/admin/users/{demo.users['support1']}",
        f"/profile/admin/users/{demo.users['patient1']}",  # with the patient's email address
        "/profile/admin/locations",
        f"/profile/admin/hours?doctor={demo.users['doctor1']}&location={demo.locations['berlin']}",
        "/profile/admin/fees",
        f"/profile/admin/insurance?patient={demo.patients['patient1']}",
        "/profile/admin/webhooks",
        f"/profile/admin/webhooks/{created.json()['id']}",
    ]
    spec = (await client.get("/openapi.json")).json()
    checked: set[str] = set()
    for page_path in pages:
        for action, elements in await _post_actions(client, admin.headers, page_path):
            data, _ = collect(elements, action["form"], {})
            schema = _body(spec, "post", _template(spec, action["endpoint"]), "application/x-www-form-urlencoded")
            patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
            unknown = [n for n in data if n not in schema["properties"] and not any(p.search(n) for p in patterns)]
            assert unknown == [], (action, unknown)
            if action["endpoint"].split("?")[0].endswith("/save"):
                wire = _on_the_wire(schema, data)
                errors = [e.message for e in jsonschema_rs.validator_for(schema).iter_errors(wire)]
                assert errors == [], (action, data, errors)
            checked.add(_template(spec, action["endpoint"]))
    assert {
        "/profile/admin/users/create", "/profile/admin/users/{user_id}/save", "/profile/admin/locations/create",
        "/profile/admin/locations/{location_id}/save", "/profile/admin/hours/save",
        "/profile/admin/hours/exceptions/add", "/profile/admin/fees/add", "/profile/admin/insurance/create",
        "/profile/admin/insurance/policies/{policy_id}/save", "/profile/admin/webhooks/create",
        "/profile/admin/webhooks/{endpoint_id}/save",
    } <= checked  # fmt: skip


@pytest.mark.parametrize(
    ("path", "form", "field"),
    [
        # A time on a line without a day is still a time (the line itself is dropped).
        ("/profile/admin/hours/save", {"opens~3": "9am"}, "opens~3"),
        # A location that is not an id is refused, not read as "every location".
        ("/profile/admin/hours/exceptions/add", {"day": "2027-01-04", "kind": "holiday", "location": "x"}, "location"),
    ],
)
async def test_the_hours_forms_judge_every_field_they_describe(client, login, demo, runtime, path, form, field):
    admin = await login("admin")
    doctor = {"doctor": str(demo.users["doctor1"]), "location": str(demo.locations["berlin"])}
    before = await counts(runtime)
    assert_invalid(await client.post(path, headers=admin.headers, data={**doctor, **form}), field)
    assert await counts(runtime) == before


@pytest.mark.parametrize(
    ("form", "field"),
    [
        ({"role": "patient", "timezone": "Nowhere"}, "timezone"),
        ({"role": "support", "can_prescribe": "yes"}, "can_prescribe"),
        ({"role": "doctor", "specialty": "s" * 65}, "specialty"),
        ({"role": "admin", "password": "eight\x07chars"}, "password"),
    ],
)
async def test_the_new_user_form_judges_its_fields_for_every_role(client, login, runtime, form, field):
    admin = await login("admin")
    before = await counts(runtime)
    data = {"username": "newcomer", "display_name": "New Comer", **form}
    assert_invalid(await client.post("/profile/admin/users/create", headers=admin.headers, data=data), field)
    assert await counts(runtime) == before


async def test_saving_a_user_needs_a_name_for_doctors_too(client, login, demo, runtime):
    admin = await login("admin")
    before = await counts(runtime)
    url = f"/profile/admin/users/{demo.users['doctor1']}/save"
    assert_invalid(await client.post(url, headers=admin.headers, data={"specialty": "Dermatology"}), "display_name")
    assert await counts(runtime) == before


async def test_the_policy_forms_refuse_a_patient_that_is_no_id_and_control_characters_in_the_record(
    client, login, demo, runtime
):
    admin = await login("admin")
    policy = {"insurer": "Acme", "policy_number": "7", "valid_from": "2026-01-01", "valid_to": "2027-12-31"}
    created = await client.post(
        f"/admin/patients/{demo.patients['patient1']}/policies", headers=admin.headers, json=policy
    )
    assert created.status_code == 201, created.text
    before = await counts(runtime)
    save = f"/profile/admin/insurance/policies/{created.json()['id']}/save"
    assert_invalid(await client.post(save, headers=admin.headers, data={**policy, "patient": "x"}), "patient")
    new = {**policy, "patient": str(demo.patients["patient1"]), "third_party_data": "{\x00}"}
    assert_invalid(
        await client.post("/profile/admin/insurance/create", headers=admin.headers, data=new), "third_party_data"
    )
    assert await counts(runtime) == before
