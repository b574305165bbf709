"""The FHIR interface's HTTP edge: every answer is ``application/fhir+json``, every error an OperationOutcome with
the spec's code in ``details`` and the status FHIR expects (docs/fhir.md#errors). Routes of the FHIR router use
``FhirRoute``, which turns whatever a route raises into that shape, so no error leaves ``/fhir`` in the
service's other error shape, and none as a 500 with details."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException

from doctordesk.domain import errors as e
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.domain.fhir.errors import Gone, NotSupported, Unprocessable, VersionMismatch
from doctordesk.domain.texts import N_, Text
from doctordesk.i18n import _
from doctordesk.web import errors as web_errors
from doctordesk.web.errors import is_transient, log_unexpected
from doctordesk.web.field_messages import field_message

log = logging.getLogger(__name__)

# FHIR's statuses (RESTful API, "HTTP Status Codes"): a body that cannot be parsed or fails basic validation is
# 400; one that breaks a business rule is 422; a version mismatch with If-Match is 412. The rest as everywhere.
STATUS: dict[type[e.DomainError], int] = {
    **web_errors.STATUS,
    e.ValidationFailed: 400,
    VersionMismatch: 412,
    Unprocessable: 422,
    Gone: 410,
}


class FhirResponse(Response):
    media_type = fhir_mapping.MEDIA_TYPE

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode()


def resource_response(
    resource: Mapping[str, Any],
    *,
    status_code: int = 200,
    version: int | None = None,
    location: str | None = None,
) -> FhirResponse:
    """A resource, with ``ETag: W/"n"`` (its version) and ``Location`` when given."""
    headers: dict[str, str] = {}
    if version is not None:
        headers["ETag"] = f'W/"{version}"'
    if location is not None:
        headers["Location"] = location
    return FhirResponse(dict(resource), status_code=status_code, headers=headers)


_RESOURCE = {"type": "object", "properties": {"resourceType": {"type": "string"}}, "required": ["resourceType"]}
_OUTCOME = {
    "type": "object",
    "properties": {"resourceType": {"const": "OperationOutcome"}, "issue": {"type": "array"}},
    "required": ["resourceType", "issue"],
}
_ERROR_STATUSES = {
    400: "the request is malformed (OperationOutcome)",
    401: "no valid token or API key",
    403: "the caller's role or key may not do this",
    404: "unknown, or not the caller's to see",
    405: "an interaction the CapabilityStatement does not list (`Allow` names those it does)",
    409: "the appointment's state does not allow it, or the identifier belongs to another request",
    412: "`If-Match` names another version",
    413: "the body is larger than the limit",
    415: "the body is not application/fhir+json",
    422: "a scheduling or business rule refuses it",
    429: "too many requests",
    503: "storage busy: nothing was written, retry after `Retry-After`",
}


def fhir_body(resource_type: str) -> dict[str, Any]:
    """The request body a FHIR create documents (``openapi_extra``): one resource of ``resource_type`` as
    ``application/fhir+json``. Its elements follow the R4 resource (docs/fhir.md), which JSON Schema here does not
    repeat."""
    schema = {
        "type": "object",
        "properties": {"resourceType": {"const": resource_type}},
        "required": ["resourceType"],
    }
    return {"requestBody": {"required": True, "content": {fhir_mapping.MEDIA_TYPE: {"schema": schema}}}}


def fhir_responses(
    *, created: bool = False, any_file: bool = False, gone: bool = False
) -> dict[int | str, dict[str, Any]]:
    """The responses a FHIR operation documents in /openapi.json: its resource as ``application/fhir+json`` and
    every error as an OperationOutcome. ``any_file``: the 200 may also be a file of any type (Binary);
    ``gone``: the resource may have been deleted (410)."""
    ok: dict[str, Any] = {fhir_mapping.MEDIA_TYPE: {"schema": _RESOURCE}}
    if any_file:
        ok["*/*"] = {"schema": {"type": "string", "format": "binary"}}
    docs: dict[int | str, dict[str, Any]] = {200: {"description": "the resource or Bundle", "content": ok}}
    if created:
        docs[201] = {"description": "created", "content": {fhir_mapping.MEDIA_TYPE: {"schema": _RESOURCE}}}
    errors = dict(_ERROR_STATUSES)
    if gone:
        errors[410] = "the resource was deleted"
    for status, description in sorted(errors.items()):
        docs[status] = {"description": description, "content": {fhir_mapping.MEDIA_TYPE: {"schema": _OUTCOME}}}
    return docs


def status_for(error: e.DomainError) -> int:
    for cls in type(error).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 400


def error_response(error: e.DomainError, *, resource_type: str | None = None) -> FhirResponse:
    status = status_for(error)
    headers: dict[str, str] = {}
    if isinstance(error, NotSupported):
        status = error.status
        if error.allow:
            headers["Allow"] = ", ".join(error.allow)
    # Every text in the reader's language: the rules' and the FHIR layer's own (docs/fhir.md#errors).
    fields = {name: _(text) for name, text in error.fields.items()}
    body = fhir_mapping.error_outcome(error.code, _(error.message), fields, resource_type=resource_type)
    if error.retry_after:
        headers["Retry-After"] = str(error.retry_after)
    if status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    return FhirResponse(body, status_code=status, headers=headers)


def _field(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    return ".".join(parts) or "request"


def _resource_type(request: Request) -> str | None:
    parts = request.url.path.split("/")
    return parts[2] if len(parts) > 2 and parts[2][:1].isupper() else None


def outcome_for(request: Request, exc: Exception) -> FhirResponse:
    """The OperationOutcome answer to anything a FHIR route raised."""
    if isinstance(exc, StarletteHTTPException) and isinstance(exc.__cause__, e.DomainError):
        exc = exc.__cause__
    if isinstance(exc, e.DomainError):
        return error_response(exc, resource_type=_resource_type(request))
    if isinstance(exc, RequestValidationError):
        fields = {_field(tuple(err.get("loc", ()))): field_message(err) for err in exc.errors()}
        return error_response(e.ValidationFailed(fields=fields))
    if isinstance(exc, StarletteHTTPException):
        message = exc.detail if isinstance(exc.detail, str) else N_("Request failed.")
        if exc.status_code == 400:
            return error_response(e.ValidationFailed(message))
        return error_response(NotSupported(message, status=exc.status_code))
    if is_transient(exc):
        log.warning("database busy or unavailable: %s", exc)
        return error_response(e.ServiceBusy(retry_after=1))
    log_unexpected(exc, "unexpected error in the FHIR interface")
    body = fhir_mapping.outcome([fhir_mapping.issue("INTERNAL_ERROR", _("Something went wrong on our side."))])
    return FhirResponse(body, status_code=500)


class FhirRoute(APIRoute):
    """A route whose every error is an OperationOutcome (authentication and parameter errors included)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def answer(request: Request) -> Response:
            try:
                _acceptable(request)
                return await handler(request)
            except Exception as exc:  # every error of the FHIR interface has one shape
                return outcome_for(request, exc)

        return answer


# What an ``Accept`` header may name for a FHIR answer (JSON only; XML and other types are 406).
_JSON_TYPES = frozenset({fhir_mapping.MEDIA_TYPE, "application/json", "application/*", "*/*", "application/json+fhir"})


def _acceptable(request: Request) -> None:
    """406 when ``Accept`` names only types other than JSON (``application/fhir+xml``...). A Binary's file may be
    of any type, so Binary takes any ``Accept``; so does a bulk export's status URL (its manifest is
    ``application/json``, its files ``application/fhir+ndjson``)."""
    if request.url.path.startswith(("/fhir/Binary/", "/fhir/$export-status/")):
        return
    header = request.headers.get("accept", "").strip()
    if not header:
        return
    for part in header.split(","):
        kind, _, params = part.strip().partition(";")
        refused = any(p.strip().replace(" ", "") in ("q=0", "q=0.0", "q=0.00", "q=0.000") for p in params.split(";"))
        if kind.strip().lower() in _JSON_TYPES and not refused:
            return
    raise NotSupported(
        Text("Only {media_type} is served.", media_type=fhir_mapping.MEDIA_TYPE),
        status=406,
        fields={"Accept": Text("Accept {media_type}.", media_type=fhir_mapping.MEDIA_TYPE)},
    )


async def json_body(request: Request, resource_type: str) -> dict[str, Any]:
    """The request's resource: JSON (``application/fhir+json`` or ``application/json``), at most
    ``MAX_BODY_BYTES``, an object of ``resource_type``. ValidationFailed (400) for anything else; nothing has been
    written when this refuses."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind not in (fhir_mapping.MEDIA_TYPE, "application/json"):
        raise NotSupported(Text("Send the resource as {media_type}.", media_type=fhir_mapping.MEDIA_TYPE), status=415)
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > fhir_mapping.MAX_BODY_BYTES:
        raise e.PayloadTooLarge(
            Text("A resource may have at most {max_body_bytes} bytes.", max_body_bytes=fhir_mapping.MAX_BODY_BYTES)
        )
    raw = b""
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > fhir_mapping.MAX_BODY_BYTES:
            raise e.PayloadTooLarge(
                Text("A resource may have at most {max_body_bytes} bytes.", max_body_bytes=fhir_mapping.MAX_BODY_BYTES)
            )
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise e.ValidationFailed(N_("The body is not valid JSON (or nested too deeply).")) from None
    if not isinstance(body, dict):
        raise e.ValidationFailed(N_("The body must be a JSON object (one resource)."))
    if body.get("resourceType") != resource_type:
        raise e.ValidationFailed(
            Text("Expected a resource of type {resource_type}.", resource_type=resource_type),
            fields={"resourceType": Text("Must be {resource_type}.", resource_type=resource_type)},
        )
    return body
