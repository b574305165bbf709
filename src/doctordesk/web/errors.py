"""The one table from error code to HTTP status, and the handlers that answer every error in the one shape."""

from __future__ import annotations

import logging
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from sqlalchemy import exc as sa
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import compile_path

from doctordesk.domain import errors as e
from doctordesk.domain.texts import N_
from doctordesk.i18n import _
from doctordesk.screens.protocol import error_body
from doctordesk.store.secrets.encryption import SecretKeyError
from doctordesk.web.field_messages import field_message

log = logging.getLogger(__name__)

STATUS: dict[type[e.DomainError], int] = {
    e.ValidationFailed: 422,
    e.NotFound: 404,
    e.Unauthorized: 401,
    e.Forbidden: 403,
    e.ReauthenticationRequired: 403,
    e.TooManyRequests: 429,
    e.PayloadTooLarge: 413,
    e.ChatDisabled: 403,
    e.AppointmentChanged: 409,
    e.DateNotCovered: 422,
    e.ForbiddenByPolicy: 422,
    e.ThirdPartyDataInvalid: 422,
    e.InvalidTransition: 409,
    e.IdempotencyKeyReused: 409,
    e.ServiceBusy: 503,
}

# PostgreSQL SQLSTATEs of a transaction that failed only because of other transactions or the server's state:
# serialization failure, deadlock, lock timeout, statement cancelled, server shutting down or unavailable.
TRANSIENT_SQLSTATES = {"40001", "40P01", "55P03", "57014", "57P01", "57P03"}

# Codes for errors raised by the framework itself (routing, methods).
HTTP_CODES = {
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
    429: "TOO_MANY_REQUESTS",
}


# The framework's own texts for the errors it raises (each status's reason phrase, a body it cannot parse): in the
# catalog, so they reach the reader in their language like ours.
FRAMEWORK_TEXTS = (
    N_("Bad Request"),
    N_("Unauthorized"),
    N_("Forbidden"),
    N_("Not Found"),
    N_("Method Not Allowed"),
    N_("Request Entity Too Large"),
    N_("Unsupported Media Type"),
    N_("Too Many Requests"),
    N_("There was an error parsing the body"),
)


def status_for(error: e.DomainError) -> int:
    for cls in type(error).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 400


def error_response(error: e.DomainError) -> JSONResponse:
    status = status_for(error)
    # The texts in the reader's language (``code`` stays the spec's).
    fields = {name: _(text) for name, text in error.fields.items()} if error.fields else error.fields
    body = error_body(
        code=error.code,
        message=_(error.message),
        status=status,
        fields=fields,
        reload=isinstance(error, e.AppointmentChanged),
    )
    body.update(error.extra)
    headers = {"Retry-After": str(error.retry_after)} if error.retry_after else None
    if status == 401:
        headers = {**(headers or {}), "WWW-Authenticate": "Bearer"}
    return JSONResponse(body, status_code=status, headers=headers)


def is_transient(error: Exception) -> bool:
    """A database error that says "try again" rather than "this request is wrong": a lock held too long (SQLite
    ``database is locked``, PostgreSQL lock timeout or deadlock), a lost or exhausted connection."""
    if isinstance(error, sa.TimeoutError | sa.InterfaceError):
        return True  # the pool is exhausted; a connection went away
    if not isinstance(error, sa.DBAPIError):
        return False
    if error.connection_invalidated or getattr(error.orig, "sqlstate", None) in TRANSIENT_SQLSTATES:
        return True
    # SQLite says "database is locked" or "database table is locked"; its other operational errors (a missing
    # table, a read-only file) are not cured by waiting, and stay bugs.
    return isinstance(error, sa.OperationalError) and "locked" in str(error.orig)


def _field_name(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header", "form")]
    return ".".join(parts) or "request"


def install(app: FastAPI) -> None:
    @app.exception_handler(e.DomainError)
    async def _domain(_request: Request, exc: e.DomainError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        allowed = allowed_methods(request)
        if allowed and request.method not in allowed:
            # A path of its own (``/profile/admin/users/create``) that a templated route also matches with an
            # invalid id (``/profile/admin/users/{user_id}``): the method is not allowed on that resource.
            headers = {"Allow": ", ".join(allowed)}
            body = error_body("METHOD_NOT_ALLOWED", _("Method Not Allowed"), 405)
            return JSONResponse(body, status_code=405, headers=headers)
        fields: dict[str, str] = {}
        for err in exc.errors():
            # In our words, so the reader's language (the framework's own messages are English only).
            fields.setdefault(_field_name(tuple(err.get("loc", ()))), field_message(err))
        return error_response(e.ValidationFailed(fields=fields))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # The framework wraps errors raised while reading the body (e.g. the body limit) in a 400.
        if isinstance(exc.__cause__, e.DomainError):
            return error_response(exc.__cause__)
        message = exc.detail if isinstance(exc.detail, str) else N_("Request failed.")
        if exc.status_code == 400:
            # A body the form or JSON parser refuses: malformed input, in the one validation shape.
            return error_response(e.ValidationFailed(message))
        code = HTTP_CODES.get(exc.status_code, "HTTP_ERROR")
        headers = getattr(exc, "headers", None)
        if exc.status_code == 405:
            # The framework names only the methods of the first route on the path; the answer names them all.
            headers = {**(headers or {}), "Allow": ", ".join(allowed_methods(request))}
        return JSONResponse(error_body(code, _(message), exc.status_code), status_code=exc.status_code, headers=headers)

    # Handled where the request's other errors are (not re-raised to the server, which would log a traceback).
    @app.exception_handler(SecretKeyError)
    @app.exception_handler(sa.DBAPIError)
    @app.exception_handler(sa.TimeoutError)
    @app.exception_handler(Exception)
    async def _unexpected(_request: Request, exc: Exception) -> JSONResponse:
        return unexpected_response(exc)


def allowed_methods(request: Request) -> list[str]:
    """Every method the API description lists for the request's path (HEAD beside GET), sorted. Compiled once per
    app from the routes the description is made of (``described_methods``): the framework's own 405 names only the
    first route's methods. A path of its own (no ``{…}``) is its own resource: only its methods count, not those
    of a templated path that also matches it."""
    table: list[tuple[re.Pattern[str], set[str], bool]] | None = getattr(request.app.state, "allowed_methods", None)
    if table is None:
        table = []
        for path, methods in described_methods(request.app).items():
            if "GET" in methods:
                methods.add("HEAD")
            table.append((compile_path(path)[0], methods, "{" not in path))
        request.app.state.allowed_methods = table
    path = request.url.path
    matches = [(methods, literal) for regex, methods, literal in table if regex.match(path)]
    if any(literal for _, literal in matches):
        matches = [(methods, literal) for methods, literal in matches if literal]
    return sorted({m for methods, _ in matches for m in methods})


def described_methods(app: FastAPI) -> dict[str, set[str]]:
    """The paths of /openapi.json and their methods, read from the routes it describes (path operations in the
    schema), without building the whole description (a second of work for an app that has not yet served it)."""
    paths: dict[str, set[str]] = {}
    for route in app.routes:
        if isinstance(route, APIRoute) and route.include_in_schema:
            methods = {m.upper() for m in route.methods or () if m.lower() in _METHODS}
            paths.setdefault(route.path_format, set()).update(methods)
    return paths


_METHODS = {"get", "put", "post", "patch", "delete", "head", "options"}


def log_unexpected(exc: Exception, what: str) -> None:
    """A stored secret the keys do not open is the operator's to fix: its reason is logged, without a traceback
    (docs/operations.md#secrets-at-rest); anything else is a bug, logged with its traceback."""
    if isinstance(exc, SecretKeyError):
        log.error("cannot read a stored secret: %s", exc)
    else:
        log.exception(what, exc_info=exc)


def unexpected_response(exc: Exception) -> JSONResponse:
    """An error that is not the request's fault: busy storage (503, nothing written: its transaction was rolled
    back when the error left it) or a bug (logged with its traceback, 500 without details)."""
    if is_transient(exc):
        log.warning("database busy or unavailable: %s", exc)
        return error_response(e.ServiceBusy(retry_after=1))
    log_unexpected(exc, "unexpected error")
    return JSONResponse(error_body("INTERNAL_ERROR", _("Something went wrong on our side."), 500), status_code=500)
