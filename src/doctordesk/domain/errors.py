"""One error model for the whole service: a ``DomainError`` subclass per error code (docs/protocol.md#errors). The
web edge maps codes to HTTP statuses in one table (``web/errors.py``); services never raise HTTP errors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from doctordesk.domain.texts import N_


class DomainError(Exception):
    code = "ERROR"
    default_message = N_("The request could not be completed.")

    def __init__(
        self,
        message: str | None = None,
        *,
        fields: Mapping[str, str] | None = None,
        retry_after: int | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        self.message = message or self.default_message
        self.fields: dict[str, str] = dict(fields or {})
        self.retry_after = retry_after
        # Members the error body carries beside the usual ones (e.g. the factors a sign-in may use next).
        self.extra: dict[str, Any] = dict(extra or {})
        super().__init__(self.message)


class ValidationFailed(DomainError):
    code = "FIELDS_VALIDATION_ERROR"
    default_message = N_("One or more fields are missing or invalid.")


class NotFound(DomainError):
    code = "NOT_FOUND"
    default_message = N_("Not found.")


class Unauthorized(DomainError):
    code = "UNAUTHORIZED"
    default_message = N_("A valid access token is required.")


class MfaRequired(Unauthorized):
    """The password was right; the sign-in needs the user's second factor too (``factors``: which they have)."""

    code = "MFA_REQUIRED"
    default_message = N_("Enter the code from your authenticator app, a recovery code, or use your passkey.")


class MfaEnrolmentRequired(Unauthorized):
    """The password was right, but the user's role must use a second factor and they have none yet: the body's
    ``enrolment_token`` lets them set one up (docs/accounts.md#second-factor)."""

    code = "MFA_ENROLMENT_REQUIRED"
    default_message = N_("Your role must sign in with a second factor. Set one up now.")


class Forbidden(DomainError):
    code = "FORBIDDEN"
    default_message = N_("You are not allowed to do this.")


class ReauthenticationRequired(Forbidden):
    """The change asked for (a factor, recovery codes, an app's access) needs a recent proof of who one is: a sign-in
    or ``POST /auth/reauthenticate`` within ``DOCTORDESK_REAUTH_SECONDS`` (docs/accounts.md#recent-authentication)."""

    code = "REAUTHENTICATION_REQUIRED"
    default_message = N_("Confirm it is you: enter your password again.")


class TooManyRequests(DomainError):
    code = "TOO_MANY_REQUESTS"
    default_message = N_("Too many requests. Try again later.")


class PayloadTooLarge(DomainError):
    code = "PAYLOAD_TOO_LARGE"
    default_message = N_("The request body is too large.")


class ChatDisabled(DomainError):
    code = "DOCTOR_COMMUNITY_CHAT_DISABLED"
    default_message = N_("Chat is disabled for this appointment.")


class AppointmentChanged(DomainError):
    code = "APPOINTMENT_CHANGED"
    default_message = N_("The appointment has changed. Reload it before submitting.")


class DateNotCovered(DomainError):
    code = "APPOINTMENT_DATE_NOT_COVERED"
    default_message = N_("The proposed date is not covered by the patient's policy.")


class ForbiddenByPolicy(DomainError):
    code = "FORBIDDEN_DUE_TO_POLICY_TERMS"
    default_message = N_("The patient's policy terms do not allow this appointment.")


class ThirdPartyDataInvalid(DomainError):
    code = "THIRD_PARTY_DATA_INVALID"
    default_message = N_("The patient's insurance data is missing or malformed.")


class InvalidTransition(DomainError):
    code = "INVALID_TRANSITION"
    default_message = N_("The appointment's status does not allow this action.")


class IdempotencyKeyReused(DomainError):
    code = "IDEMPOTENCY_KEY_REUSED"
    default_message = N_("This Idempotency-Key was already used with a different request body.")


class ServiceBusy(DomainError):
    code = "SERVICE_BUSY"
    default_message = N_("The service is busy. Nothing was changed; please try again in a moment.")
