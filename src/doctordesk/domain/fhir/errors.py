"""Errors the FHIR interface adds to the domain's tree: they keep the spec's codes and only change the HTTP
status FHIR expects (docs/fhir.md#errors)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from doctordesk.domain.errors import AppointmentChanged, DomainError, NotFound, ValidationFailed
from doctordesk.domain.texts import N_


class Unprocessable(ValidationFailed):
    """A well-formed resource that breaks a scheduling or business rule (FHIR: 422)."""


class VersionMismatch(AppointmentChanged):
    """``If-Match`` named another version than the current one (FHIR: 412)."""


class Gone(NotFound):
    """The resource was deleted (FHIR: 410); its row stays, as history."""


class NotSupported(DomainError):
    """An interaction, parameter or format this FHIR interface does not support (400, 404, 405, 406 or 415)."""

    code = "NOT_SUPPORTED"
    default_message = N_("Not supported.")

    def __init__(
        self,
        message: str | None = None,
        *,
        status: int = 400,
        fields: Mapping[str, str] | None = None,
        allow: Sequence[str] = (),
    ):
        super().__init__(message, fields=dict(fields) if fields else None)
        self.status = status
        self.allow = tuple(allow)  # a 405's methods that the path does serve
