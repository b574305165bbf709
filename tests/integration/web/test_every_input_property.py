"""Property: whatever goes into any form field, query parameter, path id or JSON body field of any operation in
/openapi.json (screens, admin API, integration API, FHIR), as any role or API key, the answer is never a 5xx, every
error is the documented shape (docs/protocol.md#errors; an OperationOutcome on FHIR), and a refused request writes
nothing. Values: arbitrary Unicode, control characters, other scripts' digits, signs, spaces, oversize text and
dates at the edges of what Python holds (the years 1 and 9999, offsets up to ±23:59, leap seconds, partial dates,
FHIR search prefixes), mixed with plausible ones so that requests also get past the first check."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.integration.web.strict_support import row_counts
from tests.support.integration import make_key

# Operations left out: the stream never ends on success (its inputs have their own tests), and logging out
# would revoke the role's token for the examples after it.
SKIPPED = {("GET", "/profile/stream"), ("POST", "/auth/logout")}
API_KEY = "api-key"  # a service account's key with both scopes: the integration API and FHIR
ROLES = ["doctor1", "support1", "patient1", "admin", None, API_KEY]
EXAMPLES_PER_ROLE = 30

SPECIAL = [
    "²",
    "١",
    "𝟙",
    "+1",
    " 1",
    "1 ",
    "01",
    "-1",
    "0",
    "1_0",
    "1e3",
    "1.0",
    "9" * 40,
    str(2**53 + 1),
    str(2**63),
    "\x00",
    "a\x00b",
    "\x1b[2J",
    "\r\n",
    "\u202e",
    "\ud7ff\ufffe",
    "x" * 5000,
    "日本語" * 2000,
    "",
]
# Dates and instants at and beyond the edges of the representable range (docs/protocol.md#input-rules): where
# moving to UTC, adding a visit, a day or a search value's precision overflowed.
EDGE_DAYS = ["9999-12-31", "0001-01-01", "1899-12-31", "1900-01-01", "2999-12-31", "3000-01-01", "0000-00-00",
             "2027-02-29", "9999", "9999-12", "0001"]  # fmt: skip
EDGE_STAMPS = ["99991231T2359Z", "00010101T0000Z", "29991231T2330Z"]  # the booking screen's picked start
_YEARS = st.sampled_from(["0001", "1899", "1900", "2026", "2999", "3000", "9999"])
_CLOCK = st.sampled_from(["00:00:00", "00:30:00", "10:30:00", "23:30:00", "23:59:59", "23:59:60", "24:00:00"])
_ZONE = st.sampled_from(["Z", "+14:00", "-14:00", "+12:00", "-12:00", "+14:01", "-23:59", "+23:59", "+00:00", ""])
EDGE_INSTANTS = st.builds(
    lambda y, md, t, z: f"{y}-{md}T{t}{z}", _YEARS, st.sampled_from(["01-01", "12-31", "02-29"]), _CLOCK, _ZONE
)
EDGE_DATES = st.one_of(st.sampled_from(EDGE_DAYS + EDGE_STAMPS), EDGE_INSTANTS)
FHIR_DATE_VALUES = st.builds(
    lambda prefix, value: prefix + value,
    st.sampled_from(["", "eq", "le", "lt", "ge", "gt", "sa", "ap"]),
    st.one_of(st.sampled_from(EDGE_DAYS), EDGE_INSTANTS),
)
CONTROL = st.text(st.characters(categories=["Cc"]), min_size=1, max_size=6)
HOSTILE = st.one_of(
    st.text(max_size=40),
    CONTROL,
    EDGE_DATES,
    st.sampled_from(SPECIAL),
    st.builds(lambda a, b: a + b, st.text(max_size=8), CONTROL),
    st.integers(17, 3000).map(lambda n: "9" * n),
)
# For numbers: what str.isdigit and int() take but the service must not (other scripts' digits, signs, spaces).
NUMERIC = st.one_of(
    st.sampled_from(SPECIAL[:15]),
    st.text(st.characters(categories=["Nd", "No"]), min_size=1, max_size=4),
    st.builds(lambda sign, n: f"{sign}{n}", st.sampled_from(["+", " ", "0", "-"]), st.integers(0, 99)),
)


def _operations(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Every operation with its path and query parameters and its form fields (name → schema)."""
    schemas = spec.get("components", {}).get("schemas", {})
    ops = []
    for path, operations in spec["paths"].items():
        for method, op in operations.items():
            if (method.upper(), path) in SKIPPED:
                continue
            params = [p for p in op.get("parameters", []) if p["in"] in ("path", "query")]
            fields: dict[str, Any] = {}
            for content in op.get("requestBody", {}).get("content", {}).values():
                schema = content.get("schema", {})
                if "$ref" in schema:
                    schema = schemas[schema["$ref"].rsplit("/", 1)[-1]]
                fields.update(schema.get("properties", {}))
            ops.append({"method": method.upper(), "path": path, "params": params, "fields": fields})
    return ops


def _plausible(schema: dict[str, Any], ids: list[str]) -> st.SearchStrategy[str]:
    """A value that may pass the first check: an enum member, a real id, a date, some text."""
    for option in schema.get("anyOf", []):
        if option.get("type") != "null":
            schema = {**option, **{k: v for k, v in schema.items() if k != "anyOf"}}
    if "enum" in schema:
        return st.sampled_from([str(v) for v in schema["enum"]])
    if schema.get("type") == "array":
        return _plausible(schema.get("items", {}), ids)
    if schema.get("type") == "integer":
        return st.sampled_from([*ids, "1", "2", "3"])
    if schema.get("format") == "date":
        return st.one_of(st.sampled_from(["2026-11-24", "2026-11-30", "2027-01-01"]), EDGE_DATES)
    if schema.get("format") == "date-time":
        return st.one_of(st.sampled_from(["2026-11-26T11:00:00+01:00", "2026-11-23T00:00:00Z"]), EDGE_DATES)
    return st.sampled_from(["ok", "10:00", "Europe/Berlin", "true", "Hello", "doctor1", "demo"])


@st.composite
def requests(draw: st.DrawFn, ops: list[dict[str, Any]], ids: list[str]) -> dict[str, Any]:
    """One operation's request: mostly one hostile input among plausible ones (so that it gets as far as the
    check it tests), sometimes hostile values anywhere."""
    op = draw(st.sampled_from(ops))
    inputs = [("param", p["name"], p) for p in op["params"]] + [("field", n, f) for n, f in op["fields"].items()]
    target = draw(st.sampled_from(inputs)) if inputs else None
    anywhere = draw(st.integers(0, 3)) == 0

    def value(name: str, schema: dict[str, Any], entry: tuple[str, str, Any]) -> str:
        if entry == target or (anywhere and draw(st.booleans())):
            numeric = "integer" in str(schema.get("type")) or "integer" in str(schema.get("anyOf"))
            return draw(st.one_of(NUMERIC, HOSTILE) if numeric else HOSTILE)
        if name == "version":
            return "1"
        return draw(_plausible(schema, ids))

    path, query = op["path"], {}
    for entry in inputs:
        kind, name, param = entry
        if kind != "param":
            continue
        if param["in"] == "path":
            path = path.replace("{" + name + "}", quote(value(name, param["schema"], entry), safe=""))
        elif param.get("required") or entry == target or draw(st.booleans()):
            query[name] = value(name, param["schema"], entry)
    form = {
        name: value(name, schema, entry)
        for entry in inputs
        if entry[0] == "field"
        for name, schema in [(entry[1], entry[2])]
        if entry == target or draw(st.integers(0, 3)) > 0
    }
    return {"method": op["method"], "path": path, "query": query, "form": form}


def assert_error_shape(response: Any) -> None:
    if response.url.path.startswith("/oauth/"):  # OAuth 2's own error shape (docs/smart.md#tokens)
        body = response.json()
        assert set(body) <= {"error", "error_description"} and isinstance(body["error"], str), body
        return
    if response.url.path.startswith("/fhir/"):
        assert_operation_outcome(response)
        return
    assert response.headers["content-type"].startswith("application/json"), response.text[:200]
    body = response.json()
    assert set(body) - {"reload"} == {"kind", "code", "message", "status", "fields"}, body
    assert body["kind"] == "error" and body["status"] == response.status_code
    assert isinstance(body["code"], str) and body["code"] and isinstance(body["message"], str)
    assert isinstance(body["fields"], dict) and all(isinstance(v, str) for v in body["fields"].values())


def assert_operation_outcome(response: Any) -> None:
    """The FHIR interface's error shape (docs/fhir.md#errors): an OperationOutcome with the code in details."""
    assert response.headers["content-type"].startswith("application/fhir+json"), response.text[:200]
    body = response.json()
    assert body["resourceType"] == "OperationOutcome" and body["issue"], body
    for issue in body["issue"]:
        assert issue["severity"] == "error" and isinstance(issue["details"]["coding"][0]["code"], str), body


def _writes_by_design(request: dict[str, Any], status: int) -> bool:
    """A failed login is counted and audited (docs/accounts.md#throttling), and so is a wrong password when
    re-authenticating (counted with the failed logins, docs/accounts.md#recent-authentication) and a failed client
    authentication at the token and revocation endpoints (docs/smart.md#client-secrets): refusals that write on
    purpose."""
    if request["path"] in ("/oauth/token", "/oauth/revoke"):
        return status in (400, 401, 429)
    if request["path"] == "/auth/reauthenticate":
        return status in (422, 429)
    return request["path"] == "/auth/login" and status in (401, 429)


@pytest.fixture
def session_of_role() -> dict[str, Any]:
    """What the examples of one test share: the operations, the ids to try, the role's headers (set once)."""
    return {}


# --- JSON bodies, the integration API and FHIR ---------------------------------------------------------------------

# Who calls the JSON interfaces: an admin (admin API, FHIR as a user) and a service account's API key (integration
# API, FHIR as the clinic's systems), each over the operations it may reach.
CALLERS = {"admin": ("/admin/", "/fhir/"), API_KEY: ("/integration/", "/fhir/")}
# Start-like fields by name (a FHIR body is not described field by field in /openapi.json).
_DATE_NAMES = {"start", "end", "since", "day", "valid_from", "valid_to", "effective_from", "at", "from", "to"}


def _json_operations(spec: dict[str, Any], prefixes: tuple[str, ...]) -> list[dict[str, Any]]:
    """The operations under ``prefixes`` with their path and query parameters and their JSON body's schema."""
    ops = []
    for path, operations in spec["paths"].items():
        if not path.startswith(prefixes):
            continue
        for method, op in operations.items():
            params = [p for p in op.get("parameters", []) if p["in"] in ("path", "query")]
            content = op.get("requestBody", {}).get("content", {})
            body = content.get("application/json", {}).get("schema")
            ops.append({"method": method.upper(), "path": path, "params": params, "body": body})
    return ops


def _resolve(schema: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:
        schema = schemas[schema["$ref"].rsplit("/", 1)[-1]]
    for option in schema.get("anyOf", []):
        if option.get("type") != "null":
            return _resolve({**option, **{k: v for k, v in schema.items() if k != "anyOf"}}, schemas)
    return schema


JSON_HOSTILE = st.one_of(HOSTILE, EDGE_DATES, st.integers(-(2**70), 2**70), st.booleans(), st.none(), st.floats())


def _json_value(
    draw: st.DrawFn, name: str, schema: dict[str, Any], schemas: dict[str, Any], ids: list[str], hostile: bool
) -> Any:
    """A JSON value for ``schema``: hostile (any JSON type, edge dates) or plausible; dates are often at the edges."""
    if hostile:
        return draw(JSON_HOSTILE)
    schema = _resolve(schema, schemas)
    if "enum" in schema:
        return draw(st.sampled_from(schema["enum"]))
    kind = schema.get("type")
    if kind == "integer":
        return int(draw(st.sampled_from([*ids, "1", "2"])))
    if kind == "boolean":
        return draw(st.booleans())
    if kind == "array":
        return [_json_value(draw, name, schema.get("items", {}), schemas, ids, False)]
    if kind == "object" or "properties" in schema:
        return {k: _json_value(draw, k, v, schemas, ids, False) for k, v in schema.get("properties", {}).items()}
    if schema.get("format") in ("date", "date-time") or name in _DATE_NAMES:
        return draw(_plausible({"format": schema.get("format", "date-time")}, ids))
    return draw(_plausible(schema, ids))


def _fhir_appointment(draw: st.DrawFn, demo: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "resourceType": "Appointment",
        "status": "proposed",
        "start": draw(st.one_of(EDGE_DATES, st.just("2026-11-26T11:00:00+01:00"))),
        "participant": [
            {"actor": {"reference": f"Patient/{demo.patients['patient1']}"}, "status": "accepted"},
            {"actor": {"reference": f"Practitioner/{demo.users['doctor1']}"}, "status": "needs-action"},
            {"actor": {"reference": f"Location/{demo.locations['berlin']}"}, "status": "needs-action"},
        ],
    }
    if draw(st.booleans()):
        body["end"] = draw(EDGE_DATES)
    return body


@st.composite
def fhir_requests(draw: st.DrawFn, demo: Any) -> dict[str, Any]:
    """A FHIR request whose dates sit at the edges: date searches with every prefix and precision, an Appointment
    to create, an answer to an offer, a Subscription's end."""
    d, b = demo.users["doctor1"], demo.locations["berlin"]
    value = draw(st.lists(FHIR_DATE_VALUES, min_size=1, max_size=2))
    kind = draw(st.sampled_from(["Appointment", "AuditEvent", "Slot", "create", "answer", "subscription"]))
    if kind in ("Appointment", "AuditEvent"):
        return {"method": "GET", "path": f"/fhir/{kind}", "query": [("date", v) for v in value]}
    if kind == "Slot":
        query = [("schedule", f"Schedule/{d}-{b}"), *(("start", v) for v in value)]
        return {"method": "GET", "path": "/fhir/Slot", "query": query}
    if kind == "create":
        return {"method": "POST", "path": "/fhir/Appointment", "fhir": _fhir_appointment(draw, demo)}
    if kind == "answer":
        body = {
            "resourceType": "AppointmentResponse",
            "participantStatus": "accepted",
            "appointment": {"reference": f"Appointment/{demo.appointments[5]}"},
            "start": draw(EDGE_DATES),
        }
        return {"method": "POST", "path": "/fhir/AppointmentResponse", "fhir": body}
    channel = {"type": "rest-hook", "endpoint": "https://example.org/hook", "payload": "application/fhir+json"}
    body = {
        "resourceType": "Subscription",
        "status": "requested",
        "reason": "edge",
        "criteria": "Appointment?",
        "end": draw(EDGE_DATES),
        "channel": channel,
    }
    return {"method": "POST", "path": "/fhir/Subscription", "fhir": body}


@st.composite
def json_requests(
    draw: st.DrawFn, ops: list[dict[str, Any]], schemas: dict[str, Any], ids: list[str]
) -> dict[str, Any]:
    """One described operation with a JSON body built from its schema (one field hostile, or none) and its
    parameters (one hostile, or none)."""
    op = draw(st.sampled_from(ops))
    body_schema = _resolve(op["body"], schemas) if op["body"] else None
    fields = list((body_schema or {}).get("properties", {}).items())
    targets = [("param", p["name"]) for p in op["params"]] + [("field", name) for name, _ in fields]
    target = draw(st.sampled_from(targets)) if targets else None
    path, query = op["path"], []
    for p in op["params"]:
        hostile = target == ("param", p["name"])
        raw = draw(st.one_of(HOSTILE, NUMERIC)) if hostile else draw(_plausible(p["schema"], ids))
        if p["in"] == "path":
            path = path.replace("{" + p["name"] + "}", quote(raw, safe=""))
        elif p.get("required") or hostile or draw(st.booleans()):
            query.append((p["name"], raw))
    body = None
    if body_schema is not None:
        body = {
            name: _json_value(draw, name, schema, schemas, ids, target == ("field", name))
            for name, schema in fields
            if target == ("field", name) or name in body_schema.get("required", []) or draw(st.booleans())
        }
    return {"method": op["method"], "path": path, "query": query, "json": body}


def _draw_request(data: Any, role: str | None, shared: dict[str, Any], demo: Any) -> dict[str, Any]:
    """A form request to any operation; for the JSON interfaces' callers (every request of an API key, half of an
    admin's) a JSON body or a FHIR request instead."""
    if role in CALLERS and (role == API_KEY or data.draw(st.booleans(), label="json")):
        if data.draw(st.integers(0, 2), label="fhir") == 0:
            fhir: dict[str, Any] = data.draw(fhir_requests(demo), label="request")
            return fhir
        built: dict[str, Any] = data.draw(
            json_requests(shared["json_ops"], shared["schemas"], shared["ids"]), label="request"
        )
        return built
    form: dict[str, Any] = data.draw(requests(shared["ops"], shared["ids"]), label="request")
    return form


@pytest.mark.slow
@pytest.mark.parametrize("role", ROLES, ids=[r or "anonymous" for r in ROLES])
@settings(
    max_examples=EXAMPLES_PER_ROLE,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
async def test_no_input_to_any_operation_gets_a_5xx_an_undocumented_error_or_a_write_on_refusal(
    client, login, demo, runtime, session_of_role, role, data
):
    shared = session_of_role
    if not shared:
        runtime.settings.chat_send_per_minute = 0
        spec = (await client.get("/openapi.json")).json()
        shared["ops"] = _operations(spec)
        assert len(shared["ops"]) > 30  # every operation of the API, not a few
        shared["json_ops"] = _json_operations(spec, CALLERS.get(role or "", ()))
        shared["schemas"] = spec.get("components", {}).get("schemas", {})
        headers = {"X-Client-Id": "property-1"}
        if role == API_KEY:
            headers |= (await make_key(client, (await login("admin")).headers)).headers
        elif role is not None:
            headers |= (await login(role)).headers
        shared["headers"] = headers
        ids = [str(demo.appointments[i]) for i in (0, 5, 8, 14)] + [str(demo.users["doctor1"])]
        shared["ids"] = [*ids, str(demo.locations["berlin"]), str(demo.patients["patient1"])]
    request = _draw_request(data, role, shared, demo)
    before = await row_counts(runtime)
    headers, content = dict(shared["headers"]), None
    if "fhir" in request:
        headers["Content-Type"] = "application/fhir+json"
        content = json.dumps(request["fhir"])
    elif request.get("json") is not None:
        headers["Content-Type"] = "application/json"
        content = json.dumps(request["json"])
    response = await client.request(
        request["method"],
        request["path"],
        params=request.get("query"),
        data=request.get("form") or None,
        content=content,
        headers=headers,
    )
    assert response.status_code < 500, (request, response.text[:300])
    if response.status_code >= 400:
        assert_error_shape(response)
        if not _writes_by_design(request, response.status_code):
            assert await row_counts(runtime) == before, (request, response.status_code)
