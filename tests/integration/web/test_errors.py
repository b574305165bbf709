"""Every error answers in the one shape: unknown paths, wrong methods, oversized bodies, bugs; and the API
description lists every endpoint with its parameters and error responses."""

from __future__ import annotations

import logging

import httpx
import pytest
from fastapi import APIRouter
from sqlalchemy import exc as sa_exc

from doctordesk.app import create_app


class SqlState(Exception):
    """A driver error carrying a PostgreSQL SQLSTATE, as asyncpg's do."""

    def __init__(self, sqlstate: str) -> None:
        super().__init__(sqlstate)
        self.sqlstate = sqlstate


def assert_error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body == {"kind": "error", "code": code, "message": body["message"], "status": status, "fields": {}}
    return body


@pytest.mark.parametrize("path", ["/api/nothing-here", "/profile/nothing", "/auth/nothing", "/api/appointments/1/x"])
async def test_an_unknown_path_is_404_in_the_error_shape(client, path):
    assert_error(await client.get(path), 404, "NOT_FOUND")


@pytest.mark.parametrize(
    ("method", "path"),
    [("DELETE", "/profile/appointments"), ("POST", "/api/appointments"), ("GET", "/auth/login"), ("PUT", "/auth/me")],
)
async def test_a_wrong_method_is_405_in_the_error_shape_with_allow(client, method, path):
    response = await client.request(method, path)
    assert_error(response, 405, "METHOD_NOT_ALLOWED")
    assert response.headers["allow"]


async def test_a_body_over_the_declared_size_limit_is_413(client, runtime):
    size = runtime.settings.max_body_bytes + 1
    response = await client.post("/auth/login", content=b"x" * size, headers={"content-type": "text/plain"})
    assert_error(response, 413, "PAYLOAD_TOO_LARGE")


async def test_a_streamed_body_over_the_size_limit_is_413(client, runtime):
    """No Content-Length (chunked): the limit is enforced while the body streams in."""
    boundary = "b0undary"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    chunk = b"u" * 65536
    count = runtime.settings.max_body_bytes // len(chunk) + 2

    async def body():
        yield head
        for _ in range(count):
            yield chunk
        yield f"\r\n--{boundary}--\r\n".encode()

    response = await client.post(
        "/auth/login", content=body(), headers={"content-type": f"multipart/form-data; boundary={boundary}"}
    )
    assert_error(response, 413, "PAYLOAD_TOO_LARGE")


@pytest.mark.parametrize(
    "body",
    [b"a=1&" * 2000, b"username=" + b"x" * (1024 * 1024 + 10) + b"&password=demo", b"%%%", b"\xff\xfe=\x00"],
)
async def test_a_malformed_form_is_a_validation_error_never_a_500(client, demo, body):
    response = await client.post(
        "/auth/login", content=body, headers={"content-type": "application/x-www-form-urlencoded"}
    )
    assert response.status_code == 422, response.text
    assert response.json()["code"] == "FIELDS_VALIDATION_ERROR"


async def test_a_body_under_the_limit_is_read(client, demo):
    response = await client.post("/auth/login", data={"username": "doctor1", "password": "demo", "pad": "x" * 10000})
    assert response.status_code == 200


async def test_a_bug_answers_500_in_the_error_shape_without_details(settings, clock, caplog):
    app = create_app(settings, clock=clock)
    boom = APIRouter()

    @boom.get("/boom")
    async def explode() -> None:
        raise RuntimeError("secret internals /etc/passwd")

    app.include_router(boom)
    app.router.routes.insert(0, app.router.routes.pop())  # before the static mount
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    caplog.set_level(logging.ERROR)
    async with app.router.lifespan_context(app), httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        response = await c.get("/boom")
    assert response.status_code == 500
    assert response.json() == {
        "kind": "error",
        "code": "INTERNAL_ERROR",
        "message": "Something went wrong on our side.",
        "status": 500,
        "fields": {},
    }
    assert "secret" not in response.text and "Traceback" not in response.text
    assert "secret internals" in caplog.text  # logged for the operator


@pytest.mark.parametrize(
    ("error", "status", "code"),
    [
        (sa_exc.OperationalError("BEGIN IMMEDIATE", {}, Exception("database is locked")), 503, "SERVICE_BUSY"),
        (sa_exc.TimeoutError("QueuePool limit reached"), 503, "SERVICE_BUSY"),
        (sa_exc.DBAPIError("SELECT", {}, SqlState("40P01")), 503, "SERVICE_BUSY"),  # deadlock
        (sa_exc.DBAPIError("SELECT", {}, SqlState("55P03")), 503, "SERVICE_BUSY"),  # lock timeout
        (sa_exc.IntegrityError("INSERT", {}, Exception("UNIQUE constraint failed")), 500, "INTERNAL_ERROR"),
        (sa_exc.OperationalError("SELECT", {}, Exception("no such table: appointments")), 500, "INTERNAL_ERROR"),
        (sa_exc.DBAPIError("SELECT", {}, SqlState("42703")), 500, "INTERNAL_ERROR"),  # undefined column: a bug
    ],
)
async def test_busy_storage_is_503_retry_after_and_a_database_bug_stays_500(settings, clock, error, status, code):
    app = create_app(settings, clock=clock)
    boom = APIRouter()

    @boom.get("/db")
    async def fail() -> None:
        raise error

    app.include_router(boom)
    app.router.routes.insert(0, app.router.routes.pop())
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with app.router.lifespan_context(app), httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        response = await c.get("/db")
    assert_error(response, status, code)
    assert ("retry-after" in response.headers) is (status == 503)


# --- the API description ---------------------------------------------------------------------------------------


async def test_openapi_lists_every_endpoint_with_its_parameters_and_error_responses(client, app):
    response = await client.get("/openapi.json")
    assert response.status_code == 200
    spec = response.json()
    paths = spec["paths"]
    routes = {
        (method.lower(), route.path)
        for route in app.routes
        if hasattr(route, "methods") and route.include_in_schema and route.path not in ("/openapi.json",)
        for method in route.methods - {"HEAD", "OPTIONS"}
    }
    documented = {(method, path) for path, ops in paths.items() for method in ops}
    assert routes <= documented
    for path, ops in paths.items():
        for method, op in ops.items():
            assert op.get("description") or op.get("summary"), (method, path)
            if path.startswith(("/profile", "/api")):
                assert "401" in op["responses"], (method, path)
                assert op.get("security"), (method, path)
            for status, response in op["responses"].items():
                if status.startswith("4") and path.startswith("/fhir/"):  # FHIR's errors are OperationOutcomes
                    schema = response["content"]["application/fhir+json"]["schema"]
                    assert schema["properties"]["resourceType"] == {"const": "OperationOutcome"}, (method, path)
                elif status in ("404", "410") and path.startswith("/reminder/"):  # a page opened from a mail
                    assert list(response["content"]) == ["text/html"], (method, path, status)
                elif status.startswith("4") and status != "422" and path.startswith("/oauth/"):  # OAuth 2's shape
                    schema = response["content"]["application/json"]["schema"]
                    assert schema["required"] == ["error"], (method, path, status)
                elif status.startswith("4"):
                    schema = response["content"]["application/json"]["schema"]
                    assert schema["$ref"].endswith("/ErrorBody"), (method, path, status)
    get_one = paths["/api/appointments/{appointment_id}"]["get"]
    assert "appointment_id" in [p["name"] for p in get_one["parameters"]]
    listing = {p["name"] for p in paths["/api/appointments"]["get"]["parameters"]}
    assert {"status", "from", "to"} <= listing
    poll = {p["name"].lower() for p in paths["/profile/appointments"]["patch"]["parameters"]}
    assert {"x-screen-state", "x-layout"} <= poll
    assert "429" in paths["/auth/login"]["post"]["responses"]
    error_schema = paths["/api/appointments"]["get"]["responses"]["404"]["content"]["application/json"]["schema"]
    assert error_schema["$ref"].endswith("/ErrorBody")
    assert {"kind", "code", "message", "status", "fields"} <= set(
        spec["components"]["schemas"]["ErrorBody"]["properties"]
    )


async def test_the_interactive_docs_are_served(client):
    response = await client.get("/docs")
    assert response.status_code == 200 and "swagger" in response.text.lower()
