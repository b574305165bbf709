"""HEAD on every GET route answers what GET answers — the same status and headers — without a body, never 405
(``web/head_requests.py``): the API's routes, the FHIR server's, the web app's files and the event stream."""

from __future__ import annotations

import re

import httpx
from fastapi.routing import APIRoute
from starlette.routing import Mount

from tests.support.integration import make_key

# Headers that differ between two answers of the same request (a time, a request's own id).
VARYING = {"date", "x-request-id", "server-timing"}
# Paths whose body (so its length) may differ between two answers: the metrics count the collector's passes, which
# come between any two requests.
MOVING_BODIES = {"/metrics"}


def get_paths(app) -> list[str]:
    """One request path per GET route of the app (path parameters filled with ids of the demo clinic), and the web
    app's files."""
    paths: list[str] = []
    for route in app.routes:
        if isinstance(route, APIRoute) and "GET" in route.methods:
            path = re.sub(r"\{[^}:]+:path\}", "index.html", route.path)
            paths.append(re.sub(r"\{[^}]+\}", "1", path))
        elif isinstance(route, Mount):
            paths += ["/", "/index.html", "/js/main.js", "/app.css"]
    return paths


def compared(response: httpx.Response, path: str) -> dict[str, str]:
    varying = VARYING | {"content-length"} if path in MOVING_BODIES else VARYING
    return {name: value for name, value in response.headers.items() if name not in varying}


async def test_head_on_every_get_route_answers_the_get_headers_without_a_body(app, client, login):
    admin = await login("admin")
    doctor = await login("doctor1")
    key = await make_key(client, admin.headers, scopes=["appointments:read", "appointments:write"])
    paths = get_paths(app)
    assert len(paths) > 50
    assert any(p.startswith("/fhir/") for p in paths) and any(p.startswith("/integration/") for p in paths)
    assert "/profile/stream" in paths
    checked = 0
    for path in paths:
        for headers in ({}, admin.headers, doctor.headers, key.headers):
            if path == "/profile/stream" and headers:
                continue  # an open stream never ends: its HEAD is checked on the real server
            got = await client.get(path, headers=headers)
            head = await client.head(path, headers=headers)
            assert head.status_code != 405, (path, head.headers)
            assert head.status_code == got.status_code, (path, headers, got.text[:200])
            assert head.content == b"", path
            assert compared(head, path) == compared(got, path), path
            checked += 1
    assert checked > 200


async def test_head_of_a_post_only_path_is_405_naming_the_allowed_methods(client):
    response = await client.head("/auth/login")
    assert response.status_code == 405 and response.content == b""
    assert response.headers["allow"] == "POST"


async def test_head_of_a_get_route_declared_as_get_only_is_served(client):
    # The calendar feed's HEAD was once a route of its own: now every GET serves HEAD alike.
    response = await client.head("/calendar/no-such-feed.ics")
    assert response.status_code == 404 and response.content == b""


def test_head_on_a_real_server_ends_after_the_headers_even_for_the_event_stream(live_server):
    with httpx.Client(base_url=live_server.url, timeout=10) as http:
        token = http.post("/auth/login", data={"username": "doctor1", "password": "demo"}).json()["access_token"]
        auth = {"Authorization": f"Bearer {token}"}
        for path, headers in [
            ("/healthz", {}),
            ("/", {}),
            ("/js/main.js", {}),
            ("/api/appointments", auth),
            ("/fhir/metadata", {}),
        ]:
            got = http.get(path, headers=headers)
            head = http.head(path, headers=headers)
            assert head.status_code == got.status_code == 200, path
            assert head.content == b""
            assert head.headers.get("content-length") == got.headers.get("content-length"), path
            assert head.headers["content-type"] == got.headers["content-type"]
        # An open stream would never end if its body were awaited.
        stream = http.head("/profile/stream", headers={**auth, "X-Client-Id": "head-1"})
        assert stream.status_code == 200 and stream.content == b""
        assert stream.headers["content-type"].startswith("text/event-stream")
        # The connection is still good for the next request.
        assert http.get("/healthz").status_code == 200
