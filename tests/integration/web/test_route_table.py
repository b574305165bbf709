"""The service's routes behind one index: finding a route costs the same for the first router's paths, the last
one's and an unknown path, and every request gets what the routers included one by one gave it — the same route
and path parameters, 405 with Allow, 404 in the error shape, slash redirects, the web app's files, the API
description, ``url_path_for`` and the metrics' route templates."""

from __future__ import annotations

import re
import time
from typing import Any

from fastapi import FastAPI
from sqlalchemy import select
from starlette.routing import BaseRoute, Match

from doctordesk.app import ROUTERS
from doctordesk.store.tables import Appointment
from doctordesk.web import errors, responses
from doctordesk.web.route_table import CHOSEN, RouteIndex
from tests.support.errors import assert_error


def scope_for(method: str, path: str) -> dict[str, Any]:
    return {"type": "http", "method": method, "path": path, "root_path": "", "headers": [], "query_string": b""}


def found(routes: list[BaseRoute], scope: dict[str, Any]) -> tuple[Match, Any]:
    """The walk a router makes over its routes: the first full match, else the first partial one."""
    partial = None
    for route in routes:
        match, child = route.matches(scope)
        if match is Match.FULL:
            return match, child.get(CHOSEN, route)
        if match is Match.PARTIAL and partial is None:
            partial = child.get(CHOSEN, route)
    return (Match.PARTIAL, partial) if partial is not None else (Match.NONE, None)


def lookup_seconds(app: FastAPI, method: str, path: str, times: int = 2000) -> float:
    routes, scope = app.router.routes, scope_for(method, path)
    started = time.perf_counter()
    for _ in range(times):
        found(routes, scope)
    return time.perf_counter() - started


async def test_finding_a_route_costs_the_same_for_the_first_router_the_last_and_an_unknown_path(app):
    cases = {
        "first router": ("POST", "/auth/login"),
        "last router": ("PUT", "/profile/language"),
        "web app file, after every route": ("GET", "/js/main.js"),
        "unknown path": ("GET", "/profile/no-such-screen"),
    }
    matches = [found(app.router.routes, scope_for(*case))[0] for case in cases.values()]
    assert matches == [Match.FULL, Match.FULL, Match.FULL, Match.NONE]
    best = dict.fromkeys(cases, float("inf"))
    for _ in range(7):  # rounds interleaved, the best of each: a busy machine slows some rounds, not the ratio
        for name, (method, path) in cases.items():
            best[name] = min(best[name], lookup_seconds(app, method, path))
    # Walking the routers one by one, the last router's paths and a 404 cost 20-40 times the first's. The margin
    # is for a loaded machine (a ratio over 4 was seen there): the test tells the index from such a walk; the
    # index's own speed is the benchmarks' to measure.
    assert max(best.values()) / min(best.values()) < 10, best


def every_request(app: FastAPI) -> list[tuple[str, str]]:
    paths = {"/", "/nope", "/api/nope", "/profile/nope", "/fhir", "/fhir/", "/js/main.js", "/js/", "//"}
    for route in app.routes:
        path = getattr(route, "path", "")
        if path:
            path = re.sub(r"\{[^}]+\}", "7", re.sub(r"\{[^}:]+:path\}", "a/b", path))
            paths |= {path, path + "/", path.replace("/7", "/x")}
    return [(method, path) for path in sorted(paths) for method in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")]


async def test_every_request_finds_the_route_a_walk_of_every_route_finds(app):
    routes = app.routes
    assert [type(route) for route in app.router.routes] == [RouteIndex]
    assert len(routes) > 150
    requests = every_request(app)
    assert len(requests) > 1500
    for method, path in requests:
        scope = scope_for(method, path)
        assert found(app.router.routes, scope) == found(routes, scope), (method, path)


async def test_the_api_description_is_the_one_of_the_routers_included_one_by_one(app, client):
    included = FastAPI(title=app.title, version=app.version, description=app.description)
    responses.install_openapi(included)
    for router in ROUTERS:
        included.include_router(router)
    served = (await client.get("/openapi.json")).json()
    assert len(served["paths"]) > 100
    assert served == included.openapi()


async def test_a_path_parameter_reaches_its_route(client, login, runtime):
    doctor = await login("doctor1")
    async with runtime.db.read() as session:
        appointment = (await session.scalars(select(Appointment).order_by(Appointment.id))).first()
    assert appointment is not None
    response = await client.get(f"/api/appointments/{appointment.id}", headers=doctor.headers)
    assert response.status_code == 200
    assert response.json()["id"] == appointment.id


async def test_a_known_path_with_another_method_is_405_naming_the_allowed_ones(client):
    response = await client.get("/profile/appointments")
    assert_error(response, 405, "METHOD_NOT_ALLOWED")
    assert response.headers["allow"] == "PATCH, PUT"
    response = await client.get("/profile/admin/users/create")  # also matches /profile/admin/users/{user_id}
    assert_error(response, 405, "METHOD_NOT_ALLOWED")
    assert response.headers["allow"] == "POST"


async def test_the_methods_a_405_names_are_those_of_the_api_description(app):
    # The answer's Allow is read from the routes the description is made of, not from the description itself.
    verbs = {"get", "put", "post", "patch", "delete", "head", "options"}
    described = {path: {m.upper() for m in ops if m in verbs} for path, ops in app.openapi()["paths"].items()}
    assert len(described) > 100
    assert errors.described_methods(app) == described


async def test_an_unknown_path_is_404_in_the_error_shape(client):
    for path in ("/profile/no-such-screen", "/api/no/such/thing", "/integration/v2/x"):
        assert_error(await client.patch(path), 404, "NOT_FOUND")


async def test_a_path_with_a_slash_too_many_is_redirected_to_its_route(client):
    response = await client.patch("/profile/appointments/")
    assert response.status_code == 307
    assert response.headers["location"] == "http://testserver/profile/appointments"


async def test_the_web_app_is_served_after_every_route_and_kept_off_the_api(client):
    page = await client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert (await client.head("/")).status_code == 200
    script = await client.get("/js/main.js")
    assert script.status_code == 200 and script.headers["cache-control"] == "no-cache"
    assert_error(await client.get("/auth/login"), 405, "METHOD_NOT_ALLOWED")


async def test_head_reaches_a_route_declared_for_get(client):
    response = await client.head("/calendar/no-such-feed.ics")
    assert response.status_code == 404 and response.content == b""


async def test_url_path_for_finds_every_route(app):
    assert app.url_path_for("review_page", appointment_id=3) == "/profile/appointments/3/approve"
    assert app.url_path_for("healthz") == "/healthz"
    assert app.url_path_for("web", path="index.html") == "/index.html"


async def test_metrics_name_the_route_template(client):
    await client.patch("/profile/appointments/7/approve/change")
    await client.get("/nope/nope")
    text = (await client.get("/metrics")).text
    assert 'method="PATCH",route="/profile/appointments/{appointment_id}/approve/change"' in text
    assert 'method="GET",route="unmatched"' in text
