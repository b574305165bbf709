"""Every input strict: numbers are ASCII digits in their range, free text holds no control characters, the caller
is authenticated before its headers are judged, and the protocol's answers (405 Allow, dates, the API
description) say what the service does. On SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.chat import SEND, stored
from tests.support.review import REQUESTED, aid, approve_url, card, snapshot


def assert_invalid(response: Any, *fields: str) -> dict[str, Any]:
    assert response.status_code == 422, response.text
    body: dict[str, Any] = response.json()
    assert body["kind"] == "error" and body["code"] == "FIELDS_VALIDATION_ERROR" and body["status"] == 422
    for field in fields:
        assert field in body["fields"], body
    return body


def _approve_form(demo: Any, **changes: str) -> dict[str, str]:
    form = {**card(1, demo.users["doctor1"], demo.locations["berlin"], "2026-11-24", "10:00"), "version": "1"}
    form.update(changes)
    return form


# --- 1. one strict parser for every id and number -------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("profile~1", "²"),
        ("location~1", "³"),
        ("version", "¹"),
        ("profile~1", "١"),  # Arabic-Indic one: a digit to str.isdigit and int(), not to the service
        ("location~1", "١"),
        ("version", "+1"),
        ("version", " 1"),
        ("profile~1", "+{doctor}"),
        ("profile~1", " {doctor}"),
        ("profile~1", "0{doctor}"),
    ],
)
async def test_a_number_not_in_ascii_digits_is_refused_naming_its_field_and_nothing_is_written(
    client, login, demo, runtime, field, value
):
    doctor = await login("doctor1")
    a = aid(demo, REQUESTED)
    before = await snapshot(runtime, a)
    form = _approve_form(demo, **{field: value.format(doctor=demo.users["doctor1"])})
    response = await client.post(approve_url(a), headers=doctor.headers, data=form)
    assert_invalid(response, field)
    assert await snapshot(runtime, a) == before


@pytest.mark.parametrize("name", ["date~²", "date~١", "time~+1", "profile~01", "location~ 1"])
async def test_a_card_field_numbered_otherwise_than_in_ascii_digits_is_unknown(client, login, demo, runtime, name):
    doctor = await login("doctor1")
    a = aid(demo, REQUESTED)
    before = await snapshot(runtime, a)
    response = await client.post(approve_url(a), headers=doctor.headers, data=_approve_form(demo, **{name: "1"}))
    assert_invalid(response, name)
    assert await snapshot(runtime, a) == before


async def test_the_ascii_spelling_of_the_same_form_is_accepted(client, login, demo, runtime):
    doctor = await login("doctor1")
    response = await client.post(approve_url(aid(demo, REQUESTED)), headers=doctor.headers, data=_approve_form(demo))
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("raw", ["²", "١", "+{id}", " {id}", "{id} ", "0{id}", "-1", "0", str(2**53 + 1)])
async def test_a_chat_send_with_a_non_ascii_or_signed_appointment_id_is_refused(client, login, demo, runtime, raw):
    doctor = await login("doctor1")
    before = await stored(runtime)
    data = {"content": "Hello", "appointment-id": raw.format(id=demo.appointments[0])}
    response = await client.post(SEND, headers=doctor.headers, data=data)
    assert_invalid(response, "appointment-id")
    assert await stored(runtime) == before


@pytest.mark.parametrize("spelling", ["+{id}", "%20{id}", "{id}%20", "0{id}", "%C2%B2", "%D9%A1", "1_0"])
async def test_a_path_id_is_only_ascii_digits(client, login, demo, spelling):
    doctor = await login("doctor1")
    path = "/api/appointments/" + spelling.format(id=demo.appointments[0])
    assert_invalid(await client.get(path, headers=doctor.headers), "appointment_id")


@pytest.mark.parametrize(
    "query", ["appointment-id=%2B{id}", "appointment-id=%20{id}", "appointment-id=%C2%B2", "appointment-id=0{id}"]
)
async def test_a_query_id_is_only_ascii_digits(client, login, demo, query):
    doctor = await login("doctor1")
    url = "/profile/messages/user-chat?" + query.format(id=demo.appointments[0])
    assert_invalid(await client.put(url, headers=doctor.headers), "appointment-id")


@pytest.mark.parametrize("limit", ["%2B5", "%205", "5.0", "1_0", "%D9%A5"])
async def test_the_read_api_limit_is_only_ascii_digits(client, login, demo, limit):
    doctor = await login("doctor1")
    assert_invalid(await client.get(f"/api/appointments?limit={limit}", headers=doctor.headers), "limit")


# --- 2. one free-text rule on both databases ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("username", "password", "field"),
    [("doc\x00tor1", "demo", "username"), ("doctor1", "de\x00mo", "password"), ("doctor1\x1b", "demo", "username")],
)
async def test_a_login_with_control_characters_is_refused_without_a_500(
    client, demo, runtime, username, password, field
):
    from tests.integration.web.strict_support import row_counts

    before = await row_counts(runtime)
    response = await client.post("/auth/login", data={"username": username, "password": password})
    assert_invalid(response, field)
    assert await row_counts(runtime) == before


@pytest.mark.parametrize("reason", ["No\x00thanks", "Beep\x07", "esc\x1b[31m", "c1\x85c1"])
async def test_a_decline_reason_with_control_characters_is_refused_and_nothing_stored(
    client, login, demo, runtime, reason
):
    doctor = await login("doctor1")
    a = aid(demo, REQUESTED)
    before = await snapshot(runtime, a)
    response = await client.post(
        f"/profile/appointments/{a}/decline", headers=doctor.headers, data={"reason": reason, "version": "1"}
    )
    assert_invalid(response, "reason")
    assert await snapshot(runtime, a) == before


async def test_a_decline_reason_may_span_lines(client, login, demo, runtime):
    doctor = await login("doctor1")
    a = aid(demo, REQUESTED)
    response = await client.post(
        f"/profile/appointments/{a}/decline",
        headers=doctor.headers,
        data={"reason": "Please book a specialist.\r\n\tThank you.", "version": "1"},
    )
    assert response.status_code == 200, response.text
    assert (await snapshot(runtime, a))["reason"] == "Please book a specialist.\r\n\tThank you."


@pytest.mark.parametrize("content", ["a\x00b", "\x1b[2J", "c1 \x9b"])
async def test_a_chat_message_with_control_characters_is_refused(client, login, demo, runtime, content):
    doctor = await login("doctor1")
    before = await stored(runtime)
    data = {"content": content, "appointment-id": str(demo.appointments[0])}
    assert_invalid(await client.post(SEND, headers=doctor.headers, data=data), "content")
    assert await stored(runtime) == before


@pytest.mark.parametrize("value", ["da\x00te", "2026-11-24\x00", "10:00\x1b"])
async def test_a_card_field_with_control_characters_is_refused_and_not_kept_in_the_draft(client, login, demo, value):
    doctor = await login("doctor1")
    a = aid(demo, REQUESTED)
    await client.put(approve_url(a), headers=doctor.headers)
    response = await client.patch(approve_url(a) + "/change", headers=doctor.headers, data={"date~1": value})
    assert response.status_code in (200, 422), response.text
    assert "\x00" not in response.text and "\\u0000" not in response.text
    page = await client.put(approve_url(a), headers=doctor.headers)
    assert page.status_code == 200 and "\\u0000" not in page.text and "\\u001b" not in page.text


@pytest.mark.parametrize(
    ("header", "value"),
    [("X-Client-Id", "caf\xe9"), ("X-Client-Id", "tab\x01"), ("X-Push-Token", "tok en"), ("X-Device-Id", "d\x7f")],
)
async def test_a_header_value_outside_its_rule_is_refused_naming_the_header(client, login, demo, header, value):
    doctor = await login("doctor1")
    headers = {**doctor.headers, header: value.encode("latin-1")}
    if header != "X-Client-Id":
        headers |= {"X-Push-Platform": "ios", "X-Device-Id": "phone-1", "X-Push-Token": "tok-1"}
        headers[header] = value.encode("latin-1")
    assert_invalid(await client.put("/profile/appointments", headers=headers), header)


# --- 5. order and conformance ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "headers"),
    [
        ("PUT", "/profile/appointments", {"X-Client-Id": "bad id!"}),
        ("PUT", "/profile/appointments", {"X-Layout": "tv"}),
        ("PUT", "/profile/appointments", {"X-Push-Platform": "nokia", "X-Push-Token": "x y"}),
        ("GET", "/auth/me", {"X-Push-Platform": "nokia"}),
        ("POST", "/profile/appointments/1/decline", {"X-Device-Id": "only"}),
        ("GET", "/api/appointments/%C2%B2", {}),
        ("GET", "/api/appointments?to=0", {}),
        ("GET", "/profile/stream", {"X-Client-Id": "bad id!"}),
        ("GET", "/profile/stream", {}),
        ("GET", "/profile/stream?ticket=nope", {}),
    ],
)
async def test_an_anonymous_call_is_401_whatever_else_is_wrong(client, demo, method, path, headers):
    response = await client.request(method, path, headers=headers)
    assert response.status_code == 401, response.text
    assert response.json()["code"] == "UNAUTHORIZED"
    assert response.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("DELETE", "/profile/appointments", {"PUT", "PATCH"}),
        ("GET", "/profile/appointments/1/approve", {"PUT", "PATCH", "POST"}),
        ("DELETE", "/profile/appointments/1/offers", {"PUT", "PATCH"}),
        ("POST", "/api/appointments", {"GET", "HEAD"}),
    ],
)
async def test_a_405_names_every_method_the_path_accepts(client, method, path, allowed):
    response = await client.request(method, path)
    assert response.status_code == 405
    assert response.json()["code"] == "METHOD_NOT_ALLOWED"
    assert set(response.headers["allow"].split(", ")) == allowed


@pytest.mark.parametrize("value", ["0", "20261124", "2026-W48-2", "2026-11-24T00:00", "2026-11-24%20", "2026-1-24"])
async def test_the_read_api_takes_dates_only_as_yyyy_mm_dd(client, login, demo, value):
    doctor = await login("doctor1")
    assert_invalid(await client.get(f"/api/appointments?to={value}", headers=doctor.headers), "to")
    ok = await client.get("/api/appointments?from=2026-11-24&to=2026-11-30", headers=doctor.headers)
    assert ok.status_code == 200


async def test_the_api_description_states_the_header_rules_it_enforces(client):
    spec = (await client.get("/openapi.json")).json()
    screen = {p["name"].lower(): p["schema"] for p in spec["paths"]["/profile/appointments"]["put"]["parameters"]}
    assert screen["x-client-id"]["pattern"] == "^[A-Za-z0-9_-]{1,64}$"
    assert screen["x-push-token"]["pattern"].startswith("^[!-~]{1,")
    assert screen["x-device-id"]["pattern"].startswith("^[!-~]{1,")
    assert screen["x-push-platform"]["enum"] == ["ios", "android"]
    assert screen["x-layout"]["enum"] == ["desktop", "mobile"]
    me = {p["name"].lower(): p for p in spec["paths"]["/auth/me"]["get"]["parameters"]}
    assert "pattern" in str(me["x-push-token"]["schema"])
    stream = {p["name"].lower(): p["schema"] for p in spec["paths"]["/profile/stream"]["get"]["parameters"]}
    assert "^[A-Za-z0-9_-]{1,64}$" in str(stream["x-client-id"]) and "^[A-Za-z0-9_-]{1,64}$" in str(stream["client"])
    path_id = spec["paths"]["/api/appointments/{appointment_id}"]["get"]["parameters"][0]["schema"]
    assert path_id["type"] == "integer" and path_id["minimum"] == 1 and path_id["maximum"] == 2**53
