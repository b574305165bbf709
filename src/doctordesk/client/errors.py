"""The SDK's errors: the service's error shape as exceptions (one ``ApiError`` subclass per code), plus transport and
protocol failures (docs/client-sdk.md#errors)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx


class ClientError(Exception):
    """Base class of everything the SDK raises on purpose."""


class TransportError(ClientError):
    """The service could not be reached or the connection broke (wraps the httpx error as ``__cause__``)."""


class ProtocolError(ClientError):
    """The service answered something that is not a page, an update set or an error body."""


class NotLoggedIn(ClientError):
    """The call needs an access token: log in first."""


class ApiError(ClientError):
    """An error answer of the service, in the one error shape of docs/protocol.md."""

    code = "ERROR"

    def __init__(
        self,
        code: str,
        message: str,
        *,
        status: int,
        fields: Mapping[str, str] | None = None,
        reload: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{code} ({status}): {message}")
        self.code = code
        self.message = message
        self.status = status
        self.fields: dict[str, str] = dict(fields or {})
        self.reload = reload
        self.retry_after = retry_after


class ValidationError(ApiError):
    code = "FIELDS_VALIDATION_ERROR"


class Unauthorized(ApiError):
    code = "UNAUTHORIZED"


class MfaRequired(Unauthorized):
    """The password was right; the sign-in needs the second factor (``login(..., otp=...)``)."""

    code = "MFA_REQUIRED"


class MfaEnrolmentRequired(Unauthorized):
    """The password was right; the role must set up a second factor first (in the web app)."""

    code = "MFA_ENROLMENT_REQUIRED"


class Forbidden(ApiError):
    code = "FORBIDDEN"


class ReauthenticationRequired(Forbidden):
    """The change needs a recent sign-in: ``POST /auth/reauthenticate`` (password and code), then retry."""

    code = "REAUTHENTICATION_REQUIRED"


class NotFound(ApiError):
    code = "NOT_FOUND"


class PayloadTooLarge(ApiError):
    code = "PAYLOAD_TOO_LARGE"


class TooManyRequests(ApiError):
    code = "TOO_MANY_REQUESTS"


class ChatDisabled(ApiError):
    code = "DOCTOR_COMMUNITY_CHAT_DISABLED"


class AppointmentChanged(ApiError):
    code = "APPOINTMENT_CHANGED"


class DateNotCovered(ApiError):
    code = "APPOINTMENT_DATE_NOT_COVERED"


class ForbiddenByPolicy(ApiError):
    code = "FORBIDDEN_DUE_TO_POLICY_TERMS"


class ThirdPartyDataInvalid(ApiError):
    code = "THIRD_PARTY_DATA_INVALID"


class InvalidTransition(ApiError):
    code = "INVALID_TRANSITION"


class IdempotencyKeyReused(ApiError):
    code = "IDEMPOTENCY_KEY_REUSED"


class ServerError(ApiError):
    code = "INTERNAL_ERROR"


class ServiceBusy(ServerError):
    code = "SERVICE_BUSY"


BY_CODE: dict[str, type[ApiError]] = {
    cls.code: cls
    for cls in (
        ValidationError,
        Unauthorized,
        MfaRequired,
        MfaEnrolmentRequired,
        Forbidden,
        ReauthenticationRequired,
        NotFound,
        PayloadTooLarge,
        TooManyRequests,
        ChatDisabled,
        AppointmentChanged,
        DateNotCovered,
        ForbiddenByPolicy,
        ThirdPartyDataInvalid,
        InvalidTransition,
        IdempotencyKeyReused,
        ServerError,
        ServiceBusy,
    )
}


def error_from_answer(status: int, body: Any, *, retry_after: str | None = None) -> ApiError:
    """The exception for an error answer: ``body`` is the decoded JSON (anything else gives a generic error)."""
    if not isinstance(body, dict) or not isinstance(body.get("code"), str):
        code = "INTERNAL_ERROR" if status >= 500 else "HTTP_ERROR"
        body = {"code": code, "message": f"The service answered HTTP {status}."}
    code = body["code"]
    cls = BY_CODE.get(code) or (ServerError if status >= 500 else ApiError)
    fields = body.get("fields")
    return cls(
        code,
        str(body.get("message") or ""),
        status=status,
        fields={str(k): str(v) for k, v in fields.items()} if isinstance(fields, dict) else None,
        reload=bool(body.get("reload", False)),
        retry_after=_seconds(retry_after),
    )


def _seconds(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def decode(response: httpx.Response) -> Any:
    """The JSON of a successful answer (None when empty); an error answer raises its ``ApiError``."""
    if response.status_code >= 400:
        raise decode_error(response)
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError as exc:
        raise ProtocolError(f"a {response.status_code} answer that is not JSON") from exc


def decode_error(response: httpx.Response) -> ApiError:
    """The exception for an error answer (its body in the error shape, or anything else: a generic error)."""
    try:
        body = response.json() if response.content else None
    except ValueError:
        body = None
    return error_from_answer(response.status_code, body, retry_after=response.headers.get("Retry-After"))
