"""Path and query parameter types that follow the input rules (domain/inputs.py) instead of the framework's lax
parsing, which takes ``+1``, `` 1``, ``1_0`` as numbers and ``0`` as the date 1970-01-01.

Each is ``Annotated[..., Path(...) or Query(...), STRICT_...]``: the ``Path``/``Query`` carries the documented
range into /openapi.json, the validator refuses every other spelling (422 FIELDS_VALIDATION_ERROR naming the
parameter). The validator comes after ``Path``/``Query`` so that the schema keeps ``minimum``/``maximum``.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError

from doctordesk.domain.inputs import MAX_ID, parse_int
from doctordesk.domain.texts import N_

_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)
# RFC 3339 date-time (what JSON Schema's ``date-time`` format means): seconds and a zone offset are required.
_INSTANT = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?([Zz]|[+-][0-9]{2}:[0-9]{2})", re.ASCII
)


STRICT_INT_MESSAGE = N_("A whole number from {minimum} to {maximum} in digits 0-9 (no sign, spaces or leading zeros).")
STRICT_DATE_MESSAGE = N_("A date as YYYY-MM-DD.")
STRICT_INSTANT_MESSAGE = N_("An instant as YYYY-MM-DDTHH:MM:SS with a zone offset (or Z).")
# Each refusal's template by its error type: the error handler writes it in the reader's language from the values
# the error carries (``web/field_messages.py``).
MESSAGES = {
    "strict_int": STRICT_INT_MESSAGE,
    "strict_date": STRICT_DATE_MESSAGE,
    "strict_instant": STRICT_INSTANT_MESSAGE,
}


def strict_int(*, minimum: int = 1, maximum: int = MAX_ID) -> BeforeValidator:
    """A validator reading a parameter's text with ``parse_int`` (ASCII digits in ``minimum..maximum``)."""

    def check(value: Any) -> int:
        parsed = parse_int(value, minimum=minimum, maximum=maximum) if isinstance(value, str) else None
        if parsed is None:
            raise PydanticCustomError("strict_int", STRICT_INT_MESSAGE, {"minimum": minimum, "maximum": maximum})
        return parsed

    return BeforeValidator(check)


def _check_date(value: Any) -> date:
    if isinstance(value, str) and _ISO_DATE.fullmatch(value):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise PydanticCustomError("strict_date", STRICT_DATE_MESSAGE)


def _check_instant(value: Any) -> datetime:
    if isinstance(value, str) and _INSTANT.fullmatch(value):
        try:
            return datetime.fromisoformat(value.upper())
        except ValueError:
            pass
    raise PydanticCustomError("strict_instant", STRICT_INSTANT_MESSAGE)


STRICT_ID = strict_int()
STRICT_DATE = BeforeValidator(_check_date)
STRICT_INSTANT = BeforeValidator(_check_instant)
