"""Every screen route reads its headers through the one screen dependency and keeps every check: a token (401),
ownership (404, or 403 for the thread list), malformed screen headers (422 naming the header), and the push
device of a mobile app's call is recorded (SQLite and PostgreSQL)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from sqlalchemy import select

from doctordesk.runtime import Runtime
from doctordesk.store.realtime_tables import Device
from tests.support.review import PENDING_5, REQUESTED, aid


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # the route template: {appointment_id}, {n} (the first card)
    user: str
    outsider: str  # a user who may not see it
    refused: int  # what the outsider gets
    data: dict[str, str] = field(default_factory=dict)
    offers: bool = False  # the appointment with offers instead of the open request

    def appointment(self, demo: Any) -> int:
        return aid(demo, PENDING_5 if self.offers else REQUESTED)


APPROVE = "/profile/appointments/{appointment_id}/approve"
ROUTES = [
    Route("PUT", APPROVE, "doctor1", "doctor2", 404),
    Route("PATCH", APPROVE, "doctor1", "doctor2", 404),
    Route("PATCH", APPROVE + "/add-alternative", "doctor1", "doctor2", 404),
    Route("PATCH", APPROVE + "/change", "doctor1", "doctor2", 404, {"date~1": "2026-11-30"}),
    Route("PATCH", APPROVE + "/delete-alternative/{n}", "doctor1", "doctor2", 404),
    Route("PATCH", APPROVE + "/timezone", "doctor1", "doctor2", 404, {"timezone": "Europe/Berlin"}),
    Route("PATCH", APPROVE + "/disclaimer", "doctor1", "doctor2", 404, {"disclaimer-displayed": "true"}),
    Route("PATCH", APPROVE + "/decline-dialog", "doctor1", "doctor2", 404),
    Route("PATCH", APPROVE + "/decline-dialog/close", "doctor1", "doctor2", 404),
    Route("PUT", "/profile/appointments/{appointment_id}/offers", "patient1", "doctor2", 404, offers=True),
    Route("PATCH", "/profile/appointments/{appointment_id}/offers", "patient1", "doctor2", 404, offers=True),
    Route("PUT", "/profile/messages/user-chat?appointment-id={appointment_id}", "doctor1", "doctor2", 404),
    Route("PATCH", "/profile/messages/load-more?appointment-id={appointment_id}", "doctor1", "doctor2", 404),
    Route(
        "POST",
        "/profile/messages/send-message",
        "doctor1",
        "doctor2",
        404,
        {"appointment-id": "{appointment_id}", "content": "Hi"},
    ),
    Route("PUT", "/profile/messages/threads", "support1", "doctor1", 403),
    Route("PATCH", "/profile/messages/threads", "support1", "doctor1", 403),
]
BAD_HEADERS = [
    ({"X-Layout": "tablet"}, "X-Layout"),
    ({"X-Client-Id": "bad id!"}, "X-Client-Id"),
    ({"X-Client-Id": "x" * 65}, "X-Client-Id"),
    ({"X-Push-Platform": "windows", "X-Device-Id": "d1"}, "X-Push-Platform"),
    ({"X-Push-Platform": "ios"}, "X-Device-Id"),
]


def route_id(route: Route) -> str:
    return f"{route.method} {route.path.split('?')[0]}"


async def call(client, route: Route, demo: Any, headers: dict[str, str]):
    a = route.appointment(demo)
    data = {k: v.format(appointment_id=a) for k, v in route.data.items()} or None
    return await client.request(route.method, route.path.format(appointment_id=a, n=1), headers=headers, data=data)


@pytest.mark.parametrize("route", ROUTES, ids=route_id)
async def test_a_screen_route_keeps_its_checks(client, login, demo, route: Route) -> None:
    assert (await call(client, route, demo, {})).status_code == 401
    outsider = await login(route.outsider)
    assert (await call(client, route, demo, outsider.headers)).status_code == route.refused
    user = await login(route.user)
    for bad, header in BAD_HEADERS:
        response = await call(client, route, demo, {**user.headers, **bad})
        assert response.status_code == 422, (bad, response.text)
        body = response.json()
        assert body["code"] == "FIELDS_VALIDATION_ERROR" and header in body["fields"], (bad, body)


async def devices(runtime: Runtime) -> dict[str, int]:
    async with runtime.db.read() as session:
        return {d.device_key: d.user_id for d in (await session.scalars(select(Device))).all()}


def phone(name: str) -> dict[str, str]:
    return {"X-Device-Id": name, "X-Push-Platform": "android", "X-Push-Token": f"token-{name}"}


async def test_every_screen_route_records_the_push_device_of_the_call(client, login, demo, runtime) -> None:
    users = {name: await login(name) for name in ("doctor1", "patient1", "support1")}
    # In an order in which each call succeeds: the review's cards exist before they are changed or deleted.
    order = sorted(ROUTES, key=lambda r: r.path.endswith("/delete-alternative/{n}"))
    order.insert(2, ROUTES[2])  # a second card, so that one can be deleted
    for n, route in enumerate(order):
        user = users[route.user]
        response = await call(client, route, demo, {**user.headers, **phone(f"phone-{n}")})
        assert response.status_code == 200, (route_id(route), response.text)
        assert (await devices(runtime))[f"phone-{n}"] == user.user["id"], route_id(route)


async def test_the_screen_routes_document_their_headers(client) -> None:
    paths = (await client.get("/openapi.json")).json()["paths"]
    expected = {"x-layout", "x-screen-state", "x-client-id", "x-device-id", "x-push-platform", "x-push-token"}
    for route in ROUTES:
        operation = paths[route.path.split("?")[0]][route.method.lower()]
        assert expected <= {p["name"].lower() for p in operation["parameters"]}, route_id(route)
