"""Error answers become typed exceptions carrying the error shape."""

from __future__ import annotations

import httpx
import pytest

from doctordesk.client import errors
from doctordesk.domain import errors as domain
from doctordesk.screens.protocol import error_body


@pytest.mark.parametrize(
    "cls",
    [
        c
        for c in vars(domain).values()
        if isinstance(c, type) and issubclass(c, domain.DomainError) and c is not domain.DomainError
    ],
)
def test_every_domain_error_code_has_its_own_exception(cls: type[domain.DomainError]) -> None:
    assert cls.code in errors.BY_CODE


def test_an_error_answer_carries_code_message_status_fields_and_reload() -> None:
    body = error_body("APPOINTMENT_CHANGED", "Reload.", 409, fields={"date~1": "Required."}, reload=True)
    error = errors.decode_error(httpx.Response(409, json=body))
    assert isinstance(error, errors.AppointmentChanged)
    assert (error.code, error.message, error.status, error.fields, error.reload) == (
        "APPOINTMENT_CHANGED",
        "Reload.",
        409,
        {"date~1": "Required."},
        True,
    )


def test_retry_after_is_kept_in_seconds() -> None:
    response = httpx.Response(
        429, json=error_body("TOO_MANY_REQUESTS", "Slow down.", 429), headers={"Retry-After": "12"}
    )
    error = errors.decode_error(response)
    assert isinstance(error, errors.TooManyRequests) and error.retry_after == 12


def test_busy_storage_is_a_server_error_to_retry_after_the_hint() -> None:
    response = httpx.Response(503, json=error_body("SERVICE_BUSY", "Busy.", 503), headers={"Retry-After": "1"})
    error = errors.decode_error(response)
    assert isinstance(error, errors.ServiceBusy) and isinstance(error, errors.ServerError)
    assert error.retry_after == 1


def test_an_unknown_code_is_a_plain_api_error_with_that_code() -> None:
    error = errors.decode_error(httpx.Response(418, json=error_body("TEAPOT", "No coffee.", 418)))
    assert type(error) is errors.ApiError and error.code == "TEAPOT"


def test_a_gateway_page_that_is_not_json_is_a_server_error() -> None:
    error = errors.decode_error(httpx.Response(502, text="<html>Bad gateway</html>"))
    assert isinstance(error, errors.ServerError) and error.status == 502


def test_a_success_that_is_not_json_is_a_protocol_error() -> None:
    with pytest.raises(errors.ProtocolError):
        errors.decode(httpx.Response(200, text="<html>"))
