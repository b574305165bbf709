"""The doors of every date, date and time and wall-clock time (tests/integration/web/test_one_date_reader.py): each
field and parameter /openapi.json describes as one, each FHIR date search parameter and body date, how a request
reaches it with a value, the value it accepts, and the bad spellings every door refuses alike."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
from sqlalchemy import TextClause, text
from sqlalchemy.engine import Dialect

from doctordesk.domain import moments
from doctordesk.runtime import Runtime
from doctordesk.store.schema import metadata
from tests.support.integration import FREE_START, request_body
from tests.support.review import REQUESTED, aid, approve_url, card

# The same bad spellings for every door, by what the field holds.
BAD_INSTANTS = {
    "a space for T": "2027-06-01 10:00:00Z",
    "lowercase t and z": "2027-06-01t10:00:00z",
    "offset minutes 99": "2027-06-01T10:00:00+01:99",
    "offset minutes 60": "2027-06-01T10:00:00+13:60",
    "an offset without its colon": "2027-06-01T10:00:00+1400",
    "seconds since 1970": "1790000000",
    "24:00": "2027-06-01T24:00:00Z",
    "a leap second": "2027-06-30T23:59:60Z",
    "a fraction of 20 digits": "2027-06-01T10:00:00.12345678901234567890Z",
    "no offset": "2027-06-01T10:00:00",
    "a day": "2027-06-01",
    "minutes only": "2027-06-01T10:00Z",
}
BAD_DAYS = {
    "a date and time": "2027-06-01T00:00:00Z",
    "a date and time with a space": "2027-06-01 00:00:00",
    "a date and midnight without offset": "2027-06-01T00:00",
    "seconds since 1970": "1790000000",
    "digits only": "20270601",
    "a week date": "2027-W22-2",
    "no such day": "2027-02-29",
    "a day without leading zeros": "2027-6-1",
}
BAD_TIMES = {
    "24:00": "24:00",
    "seconds": "10:00:00",
    "a leap second": "23:59:60",
    "a zone": "10:00Z",
    "an offset": "10:00+01:00",
    "no colon": "1000",
    "one digit for the hour": "9:00",
    "a date and time": "2027-06-01T10:00:00Z",
    "a fraction": "10:00:00.5",
}
# FHIR's search values keep FHIR's precision (a year, a month, a day, minutes): the character forms are the same.
BAD_FHIR_SEARCH = {k: v for k, v in BAD_INSTANTS.items() if k not in ("a day", "minutes only", "no offset")}
BAD = {"instant": BAD_INSTANTS, "day": BAD_DAYS, "time": BAD_TIMES, "fhir-search": BAD_FHIR_SEARCH}


@dataclass
class Ctx:
    client: httpx.AsyncClient
    demo: Any
    admin: dict[str, str]
    doctor: dict[str, str]
    patient: dict[str, str]
    key: dict[str, str]
    webhook: int
    policy: int


Send = Callable[[Ctx, str], Awaitable[httpx.Response]]


@dataclass(frozen=True)
class Door:
    kind: str  # instant, day, time, fhir-search
    good: str
    send: Send
    field: str  # the name the refusal gives (the field, parameter or FHIR expression)


def _doctor_id(c: Ctx) -> int:
    return int(c.demo.users["doctor1"])


def _berlin(c: Ctx) -> int:
    return int(c.demo.locations["berlin"])


def _query(
    method: str, path: Callable[[Ctx], str], name: str, who: str, extra: Callable[[Ctx], dict[str, str]] | None = None
) -> Send:
    async def send(c: Ctx, value: str) -> httpx.Response:
        params = {**(extra(c) if extra else {}), name: value}
        return await c.client.request(method, path(c), params=params, headers=getattr(c, who))

    return send


def _json(method: str, path: Callable[[Ctx], str], body: Callable[[Ctx, str], dict[str, Any]], who: str) -> Send:
    async def send(c: Ctx, value: str) -> httpx.Response:
        return await c.client.request(method, path(c), json=body(c, value), headers=getattr(c, who))

    return send


def _form(method: str, path: Callable[[Ctx], str], form: Callable[[Ctx, str], dict[str, str]], who: str) -> Send:
    async def send(c: Ctx, value: str) -> httpx.Response:
        return await c.client.request(method, path(c), data=form(c, value), headers=getattr(c, who))

    return send


def _fixed(path: str) -> Callable[[Ctx], str]:
    return lambda _c: path


def _cards(c: Ctx, n: int, name: str, value: str) -> dict[str, str]:
    """Review and Approve's form with cards 1 to ``n`` (10:00, 11:00, 12:00 on Tue 24 Nov), card n's ``name`` set."""
    form = {"version": "1"}
    for i in range(1, n + 1):
        form |= card(i, _doctor_id(c), _berlin(c), "2026-11-24", f"{9 + i}:00")
    return form | {f"{name}~{n}": value}


def _free_times(c: Ctx) -> dict[str, str]:
    return {"doctor": str(_doctor_id(c)), "location": str(_berlin(c)), "from": "2026-11-24", "to": "2026-11-25"}


def _waitlist(c: Ctx, name: str, value: str) -> dict[str, str]:
    """The waitlist's join form (doctor1 at Berlin, on weekdays 08:00-17:00 until 1 Dec), ``name`` set to ``value``."""
    base = {"doctor": str(_doctor_id(c)), "location": str(_berlin(c)), "service": "consultation"}
    return base | {"until": "2026-12-01", "from": "08:00", "to": "17:00"} | {name: value}


def _exception(c: Ctx, **changes: str) -> dict[str, Any]:
    base = {"day": "2027-06-01", "kind": "extra", "location_id": _berlin(c), "opens": "18:00", "closes": "19:00"}
    return base | changes


def _exception_form(c: Ctx, **changes: str) -> dict[str, str]:
    base = {"doctor": str(_doctor_id(c)), "location": str(_berlin(c)), "day": "2027-06-01", "kind": "extra"}
    return base | {"opens": "18:00", "closes": "19:00", "note": ""} | changes


def _policy_form(c: Ctx, **changes: str) -> dict[str, str]:
    base = {"patient": str(c.demo.patients["patient2"]), "insurer": "Nord Kasse", "policy_number": "NK-9"}
    return base | {"valid_from": "2026-01-01", "valid_to": "2027-12-31", "third_party_data": ""} | changes


def _fee_form(value: str) -> dict[str, str]:
    return {"kind": "doctor_fee", "doctor": "", "location": "", "amount": "95.50", "percent": "", "currency": "EUR",
            "effective_from": value, "retired": "false"}  # fmt: skip


APPOINTMENTS = _fixed("/profile/appointments")
WEEK = _fixed("/profile/appointments/week")
BOOK = _fixed("/profile/book")
AUDIT_SCREEN = _fixed("/profile/admin/audit")
WEEKLY = "2026-11-30"

# (method, path, where, name) as /openapi.json lists them → how the door is reached, its good value and the name
# its refusal gives.
DOORS: dict[tuple[str, str, str, str], Door] = {
    ("PUT", "/profile/appointments", "query", "from"): Door(
        "day", "2026-11-24", _query("PUT", APPOINTMENTS, "from", "doctor"), "from"
    ),
    ("PUT", "/profile/appointments", "query", "to"): Door(
        "day", "2026-11-24", _query("PUT", APPOINTMENTS, "to", "doctor"), "to"
    ),
    ("PUT", "/profile/appointments/week", "query", "day"): Door(
        "day", "2026-11-24", _query("PUT", WEEK, "day", "doctor"), "day"
    ),
    ("PUT", "/profile/book", "query", "week"): Door("day", WEEKLY, _query("PUT", BOOK, "week", "patient"), "week"),
    ("PATCH", "/profile/book", "query", "week"): Door("day", WEEKLY, _query("PATCH", BOOK, "week", "patient"), "week"),
    **{
        ("POST", "/profile/appointments/{appointment_id}/approve", "form", f"{name}~{n}"): Door(
            kind,
            "2026-11-24" if name == "date" else f"{9 + n}:00",
            _form(
                "POST",
                lambda c: approve_url(aid(c.demo, REQUESTED)),
                lambda c, v, n=n, name=name: _cards(c, n, name, v),
                "doctor",
            ),
            f"{name}~{n}",
        )
        for n in (1, 2, 3)
        for name, kind in (("date", "day"), ("time", "time"))
    },
    ("GET", "/api/appointments", "query", "from"): Door(
        "day", "2026-11-24", _query("GET", _fixed("/api/appointments"), "from", "doctor"), "from"
    ),
    ("GET", "/api/appointments", "query", "to"): Door(
        "day", "2026-11-24", _query("GET", _fixed("/api/appointments"), "to", "doctor"), "to"
    ),
    ("POST", "/integration/v1/appointment-requests", "json", "start"): Door(
        "instant",
        FREE_START,
        _json(
            "POST", _fixed("/integration/v1/appointment-requests"), lambda c, v: request_body(c.demo, start=v), "key"
        ),
        "start",
    ),
    ("POST", "/integration/v1/appointments/{appointment_id}/reschedule-request", "json", "start"): Door(
        "instant",
        FREE_START,
        _json(
            "POST",
            lambda c: f"/integration/v1/appointments/{aid(c.demo, REQUESTED)}/reschedule-request",
            lambda _c, v: {"start": v},
            "key",
        ),
        "start",
    ),
    ("GET", "/integration/v1/free-times", "query", "from"): Door(
        "day", "2026-11-24", _query("GET", _fixed("/integration/v1/free-times"), "from", "key", _free_times), "from"
    ),
    ("GET", "/integration/v1/free-times", "query", "to"): Door(
        "day", "2026-11-25", _query("GET", _fixed("/integration/v1/free-times"), "to", "key", _free_times), "to"
    ),
    **{
        ("GET", path, "query", name): Door(
            "instant", "2026-11-23T00:00:00Z", _query("GET", _fixed(path), name, "admin"), name
        )
        for path in ("/admin/audit", "/admin/audit/export")
        for name in ("from", "to")
    },
    **{
        (method, "/profile/admin/audit", "query", name): Door(
            "instant", "2026-11-23T00:00:00Z", _query(method, AUDIT_SCREEN, name, "admin"), name
        )
        for method in ("PUT", "PATCH")
        for name in ("from", "to")
    },
    **{
        ("PUT", "/admin/doctors/{doctor_id}/hours/{location_id}", "json", f"rules[].{name}"): Door(
            "time",
            good,
            _json(
                "PUT",
                lambda c: f"/admin/doctors/{_doctor_id(c)}/hours/{_berlin(c)}",
                lambda _c, v, name=name: {
                    "rules": [{"weekday": 0, "opens": "08:00", "closes": "17:00"} | {name: v}],
                    "confirm": True,
                },
                "admin",
            ),
            "rules",
        )
        for name, good in (("opens", "08:00"), ("closes", "17:00"))
    },
    ("POST", "/admin/doctors/{doctor_id}/hours-exceptions", "json", "day"): Door(
        "day",
        "2027-06-01",
        _json(
            "POST",
            lambda c: f"/admin/doctors/{_doctor_id(c)}/hours-exceptions",
            lambda c, v: _exception(c, day=v),
            "admin",
        ),
        "day",
    ),
    **{
        ("POST", "/admin/doctors/{doctor_id}/hours-exceptions", "json", name): Door(
            "time",
            good,
            _json(
                "POST",
                lambda c: f"/admin/doctors/{_doctor_id(c)}/hours-exceptions",
                lambda c, v, name=name: _exception(c, **{name: v}),
                "admin",
            ),
            name,
        )
        for name, good in (("opens", "18:00"), ("closes", "19:00"))
    },
    ("GET", "/admin/fees", "query", "at"): Door(
        "instant", "2026-12-01T10:00:00Z", _query("GET", _fixed("/admin/fees"), "at", "admin"), "at"
    ),
    ("POST", "/admin/fees", "json", "effective_from"): Door(
        "instant",
        "2026-12-01T10:00:00Z",
        _json(
            "POST",
            _fixed("/admin/fees"),
            lambda _c, v: {"kind": "doctor_fee", "amount_cents": 9000, "effective_from": v},
            "admin",
        ),
        "effective_from",
    ),
    **{
        ("POST", "/admin/patients/{patient_id}/policies", "json", name): Door(
            "day",
            good,
            _json(
                "POST",
                lambda c: f"/admin/patients/{c.demo.patients['patient2']}/policies",
                lambda _c, v, name=name: (
                    {
                        "insurer": "Nordic Health",
                        "policy_number": "NH-1",
                        "valid_from": "2026-01-01",
                        "valid_to": "2027-12-31",
                    }
                    | {name: v}
                ),
                "admin",
            ),
            name,
        )
        for name, good in (("valid_from", "2026-01-01"), ("valid_to", "2027-12-31"))
    },
    **{
        ("POST", "/admin/policies/{policy_id}", "json", name): Door(
            "day",
            good,
            _json("POST", lambda c: f"/admin/policies/{c.policy}", lambda _c, v, name=name: {name: v}, "admin"),
            name,
        )
        for name, good in (("valid_from", "2026-01-01"), ("valid_to", "2027-12-31"))
    },
    ("POST", "/admin/webhooks/{endpoint_id}/replay", "json", "since"): Door(
        "instant",
        "2026-11-23T00:00:00+01:00",
        _json("POST", lambda c: f"/admin/webhooks/{c.webhook}/replay", lambda _c, v: {"since": v}, "admin"),
        "since",
    ),
    **{
        ("PUT", "/admin/clinic", "json", name): Door(
            "time", good, _json("PUT", _fixed("/admin/clinic"), lambda _c, v, name=name: {name: v}, "admin"), name
        )
        for name, good in (("quiet_begin", "22:00"), ("quiet_end", "07:00"))
    },
    **{
        ("POST", "/profile/admin/clinic/save", "form", name): Door(
            "time",
            good,
            _form("POST", _fixed("/profile/admin/clinic/save"), lambda _c, v, name=name: {name: v}, "admin"),
            name,
        )
        for name, good in (("quiet_begin", "22:00"), ("quiet_end", "07:00"))
    },
    ("POST", "/profile/admin/hours/save", "form", "(opens|closes)~n"): Door(
        "time",
        "08:00",
        _form(
            "POST",
            _fixed("/profile/admin/hours/save"),
            lambda c, v: {
                "doctor": str(_doctor_id(c)),
                "location": str(_berlin(c)),
                "weekday~1": "0",
                "opens~1": v,
                "closes~1": "17:00",
            },
            "admin",
        ),
        "opens~1",
    ),
    **{
        ("POST", "/profile/waitlist", "form", name): Door(
            kind,
            good,
            _form("POST", _fixed("/profile/waitlist"), lambda c, v, name=name: _waitlist(c, name, v), "patient"),
            name,
        )
        for name, kind, good in (("until", "day", "2026-12-01"), ("from", "time", "08:00"), ("to", "time", "17:00"))
    },  # fmt: skip
    ("POST", "/profile/admin/hours/exceptions/add", "form", "day"): Door(
        "day",
        "2027-06-01",
        _form("POST", _fixed("/profile/admin/hours/exceptions/add"), lambda c, v: _exception_form(c, day=v), "admin"),
        "day",
    ),
    **{
        ("POST", "/profile/admin/hours/exceptions/add", "form", name): Door(
            "time",
            good,
            _form(
                "POST",
                _fixed("/profile/admin/hours/exceptions/add"),
                lambda c, v, name=name: _exception_form(c, **{name: v}),
                "admin",
            ),
            name,
        )
        for name, good in (("opens", "18:00"), ("closes", "19:00"))
    },
    ("POST", "/profile/admin/fees/add", "form", "effective_from"): Door(
        "day",
        "2026-12-01",
        _form("POST", _fixed("/profile/admin/fees/add"), lambda _c, v: _fee_form(v), "admin"),
        "effective_from",
    ),
    **{
        ("POST", "/profile/admin/insurance/create", "form", name): Door(
            "day",
            good,
            _form(
                "POST",
                _fixed("/profile/admin/insurance/create"),
                lambda c, v, name=name: _policy_form(c, **{name: v}),
                "admin",
            ),
            name,
        )
        for name, good in (("valid_from", "2026-01-01"), ("valid_to", "2027-12-31"))
    },
    **{
        ("POST", "/profile/admin/insurance/policies/{policy_id}/save", "form", name): Door(
            "day",
            good,
            _form(
                "POST",
                lambda c: f"/profile/admin/insurance/policies/{c.policy}/save",
                lambda c, v, name=name: _policy_form(c, **{name: v}),
                "admin",
            ),
            name,
        )
        for name, good in (("valid_from", "2026-01-01"), ("valid_to", "2027-12-31"))
    },
}

# The booking screen's picked start (a UTC minute, YYYYMMDDTHHMMZ): its own compact form, read by moments too.
BAD_STAMPS = {
    "an RFC 3339 instant": "2026-11-30T08:00:00Z",
    "lowercase t and z": "20261130t0800z",
    "24:00": "20261130T2400Z",
    "minute 60": "20261130T0860Z",
    "no zone": "20261130T0800",
    "seconds since 1970": "1790000000",
    "a day": "2026-11-30",
}
BAD["stamp"] = BAD_STAMPS


def _booking_request(c: Ctx, value: str) -> dict[str, str]:
    return {"doctor": str(_doctor_id(c)), "location": str(_berlin(c)), "service": "consultation", "start": value}


DOORS |= {
    (method, "/profile/book", "query", "start"): Door(
        "stamp", "20261130T0800Z", _query(method, BOOK, "start", "patient"), "start"
    )
    for method in ("PUT", "PATCH")
}
DOORS[("POST", "/profile/book/request", "form", "start")] = Door(
    "stamp", "20261130T0800Z", _form("POST", _fixed("/profile/book/request"), _booking_request, "patient"), "start"
)
DOORS |= {
    ("PATCH", "/profile/admin/audit/filter", "form", name): Door(
        "day",
        "2026-11-23",
        _form("PATCH", _fixed("/profile/admin/audit/filter"), lambda _c, v, n=name: {n: v}, "admin"),
        name,
    )
    for name in ("from", "to")
}
DOORS |= {
    ("PATCH", "/profile/appointments/filter", "form", name): Door(
        "day",
        "2026-11-24",
        _form("PATCH", _fixed("/profile/appointments/filter"), lambda _c, v, n=name: {n: v}, "doctor"),
        name,
    )
    for name in ("from", "to")
}


# --- FHIR: the date search parameters its CapabilityStatement lists, $find's range, the dates of its bodies ---


def _fhir_appointment(c: Ctx, **changes: str) -> dict[str, Any]:
    return {
        "resourceType": "Appointment",
        "status": "proposed",
        "start": FREE_START,
        "participant": [
            {"actor": {"reference": f"Patient/{c.demo.patients['patient1']}"}, "status": "accepted"},
            {"actor": {"reference": f"Practitioner/{_doctor_id(c)}"}, "status": "needs-action"},
            {"actor": {"reference": f"Location/{_berlin(c)}"}, "status": "needs-action"},
        ],
    } | changes


def _subscription(value: str) -> dict[str, Any]:
    channel = {"type": "rest-hook", "endpoint": "https://example.org/hook", "payload": "application/fhir+json"}
    return {"resourceType": "Subscription", "status": "requested", "reason": "dates", "criteria": "Appointment?",
            "end": value, "channel": channel}  # fmt: skip


def _fhir_json(path: Callable[[Ctx], str], body: Callable[[Ctx, str], dict[str, Any]], who: str = "key") -> Send:
    async def send(c: Ctx, value: str) -> httpx.Response:
        headers = {**getattr(c, who), "Content-Type": "application/fhir+json"}
        return await c.client.post(path(c), json=body(c, value), headers=headers)

    return send


def _slot_schedule(c: Ctx) -> dict[str, str]:
    return {"schedule": f"Schedule/{_doctor_id(c)}-{_berlin(c)}"}


FHIR_SEARCH_GOOD = "2026-11-24T10:00:00+01:00"
# (resource, parameter) of every date search parameter → its door; ``$find`` and bodies beside them.
FHIR_DOORS: dict[tuple[str, str], Door] = {
    (resource, name): Door(
        "fhir-search",
        "1980-01-01" if name == "birthdate" else FHIR_SEARCH_GOOD,
        _query("GET", _fixed(f"/fhir/{resource}"), name, "admin", _slot_schedule if resource == "Slot" else None),
        name,
    )
    for resource, name in [
        ("Appointment", "date"), ("Appointment", "_lastUpdated"), ("AuditEvent", "date"), ("Slot", "start"),
        ("Patient", "birthdate"),
    ]
}  # fmt: skip
FHIR_DOORS |= {
    ("Appointment/$find", name): Door(
        "fhir-search",
        {"start": "2026-11-24T08:00:00Z", "end": "2026-11-25T18:00:00Z"}[name],
        _query(
            "GET",
            _fixed("/fhir/Appointment/$find"),
            name,
            "key",
            lambda _c: {"start": "2026-11-24T08:00:00Z", "end": "2026-11-25T18:00:00Z"},
        ),
        name,
    )
    for name in ("start", "end")
}
FHIR_DOORS[("Appointment (create)", "start")] = Door(
    "fhir-search",
    FREE_START,
    _fhir_json(_fixed("/fhir/Appointment"), lambda c, v: _fhir_appointment(c, start=v)),
    "start",
)
FHIR_DOORS[("Subscription (create)", "end")] = Door(
    "fhir-search",
    "2027-06-01T10:00:00Z",
    _fhir_json(_fixed("/fhir/Subscription"), lambda _c, v: _subscription(v)),
    "end",
)


# --- what the API description states, and what the database holds -------------------------------------------


def _stated(schema: dict[str, Any]) -> bool:
    """Whether a schema holds a date, a date and time or a time: its format, or a pattern moments states."""
    if schema.get("format") in ("date", "date-time", "time"):
        return True
    pattern = schema.get("pattern", "")
    stated = (moments.DAY_PATTERN, moments.OPTIONAL_DAY_PATTERN, moments.INSTANT_PATTERN, moments.WHOLE_MINUTE_PATTERN,
              moments.TIME_PATTERN, moments.STAMP_PATTERN)  # fmt: skip
    return any(p in pattern for p in stated)


def described_dates(doc: dict[str, Any]) -> set[tuple[str, str, str, str]]:
    """Every (method, path, where, name) of /openapi.json whose schema is a date, a date-time or a time."""
    schemas = doc.get("components", {}).get("schemas", {})
    found: set[tuple[str, str, str, str]] = set()

    def walk(schema: dict[str, Any], key: tuple[str, str, str], name: str) -> None:
        if "$ref" in schema:
            schema = schemas[schema["$ref"].rsplit("/", 1)[-1]]
        if _stated(schema):
            found.add((*key, name))
        for option in schema.get("anyOf", []) + schema.get("oneOf", []) + schema.get("allOf", []):
            walk(option, key, name)
        prefix = f"{name}." if name else ""
        for child, sub in schema.get("properties", {}).items():
            walk(sub, key, prefix + child)
        for child, sub in schema.get("patternProperties", {}).items():
            walk(sub, key, prefix + re.sub(r"\((?:[0-9]+\|)+[0-9]+\)", "n", child).strip("^$"))
        if isinstance(schema.get("items"), dict):
            walk(schema["items"], key, f"{name}[]")

    for path, operations in doc["paths"].items():
        for method, op in operations.items():
            for parameter in op.get("parameters", []):
                if parameter["in"] in ("query", "path") and _stated(parameter.get("schema", {})):
                    found.add((method.upper(), path, parameter["in"], parameter["name"]))
                for option in parameter.get("schema", {}).get("anyOf", []):
                    if parameter["in"] in ("query", "path") and _stated(option):
                        found.add((method.upper(), path, parameter["in"], parameter["name"]))
            for media, content in op.get("requestBody", {}).get("content", {}).items():
                where = "json" if media.endswith("json") else "form"
                walk(content.get("schema", {}), (method.upper(), path, where), "")
    return found


def _every_row(dialect: Dialect) -> TextClause:
    """One statement that reads every row of every table as it is stored, each row as one text: PostgreSQL's text
    of the row, SQLite's quoted literal of each column (a blob in hex), both exact. One round trip instead of one
    per table (51 tables, read before and after each of a door's refusals: most of this module's time)."""
    quote = dialect.identifier_preparer.quote
    parts = []
    for table in metadata.sorted_tables:
        if dialect.name == "postgresql":
            row = "r::text"
        else:
            row = " || ',' || ".join(f"quote(r.{quote(c.name)})" for c in table.columns)
        parts.append(f"SELECT '{table.name}' AS t, {row} AS v FROM {quote(table.name)} AS r")
    return text(" UNION ALL ".join(parts))


async def everything(runtime: Runtime) -> dict[str, list[str]]:
    """Every row of every table of the schema (the demo clinic is small): a refusal leaves each as it was."""
    async with runtime.db.read() as session:
        rows = (await session.execute(_every_row(runtime.db.engine.dialect))).all()
    tables: dict[str, list[str]] = {t.name: [] for t in metadata.sorted_tables}
    for table, row in rows:
        tables[table].append(row)
    return {table: sorted(rows) for table, rows in tables.items()}
