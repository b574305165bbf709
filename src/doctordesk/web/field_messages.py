"""The framework's refusals of a request's fields, in our words and the reader's language.

FastAPI and pydantic check types, ranges and required fields before a route runs, and describe each problem in
English ("Field required", "Input should be a valid integer"). The error handler (``web/errors.py``) answers in the
one error shape with a message per field; this module turns each pydantic error into that message as a ``Text``:
from its error type and the values it carries (the limit, the allowed values), so it comes out in the reader's
language. Our own validators raise their messages (``N_`` or ``Text``) and keep them; a type not listed here gets a
general "Invalid value." rather than the framework's English.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from doctordesk.domain.texts import N_, Text
from doctordesk.web import params

INVALID: Final = N_("Invalid value.")

# Error types whose message needs no values.
FIXED: Final[dict[str, str]] = {
    "missing": N_("Required."),
    "int_parsing": N_("A whole number."),
    "int_type": N_("A whole number."),
    "int_from_float": N_("A whole number."),
    "float_parsing": N_("A number."),
    "float_type": N_("A number."),
    "finite_number": N_("A number."),
    "bool_parsing": N_("Use true or false."),
    "bool_type": N_("Use true or false."),
    "string_type": N_("Text is required here."),
    "string_unicode": N_("Text is required here."),
    "string_pattern_mismatch": N_("Not in the expected format."),
    "json_invalid": N_("Not valid JSON."),
    "json_type": N_("Not valid JSON."),
    "extra_forbidden": N_("Not a known field."),
    "dict_type": N_("An object is required here."),
    "model_type": N_("An object is required here."),
    "model_attributes_type": N_("An object is required here."),
    "list_type": N_("A list is required here."),
    "date_parsing": N_("A date as YYYY-MM-DD."),
    "date_type": N_("A date as YYYY-MM-DD."),
    "date_from_datetime_parsing": N_("A date as YYYY-MM-DD."),
    "date_from_datetime_inexact": N_("A date as YYYY-MM-DD."),
    "datetime_parsing": N_("A date and time in ISO 8601, with a zone offset."),
    "datetime_type": N_("A date and time in ISO 8601, with a zone offset."),
    "datetime_from_date_parsing": N_("A date and time in ISO 8601, with a zone offset."),
    "timezone_aware": N_("A date and time with a zone offset."),
    "time_parsing": N_("A time as HH:MM."),
    "time_type": N_("A time as HH:MM."),
    "url_parsing": N_("Not a valid URL."),
    "url_type": N_("Not a valid URL."),
    "url_scheme": N_("Use an http or https URL."),
    "uuid_parsing": N_("Not a valid UUID."),
    "none_required": N_("Must be empty."),
}


def _limited(kind: str, ctx: Mapping[str, Any]) -> Text | None:
    """Messages that name a limit the error carries."""
    if kind == "string_too_long" and "max_length" in ctx:
        return Text("At most {count} characters.", count=ctx["max_length"])
    if kind == "string_too_short" and "min_length" in ctx:
        return Text("At least {count} characters.", count=ctx["min_length"])
    if kind == "too_long" and "max_length" in ctx:
        return Text("At most {count} items.", count=ctx["max_length"])
    if kind == "too_short" and "min_length" in ctx:
        return Text("At least {count} items.", count=ctx["min_length"])
    if kind == "greater_than_equal" and "ge" in ctx:
        return Text("At least {limit}.", limit=ctx["ge"])
    if kind == "greater_than" and "gt" in ctx:
        return Text("More than {limit}.", limit=ctx["gt"])
    if kind == "less_than_equal" and "le" in ctx:
        return Text("At most {limit}.", limit=ctx["le"])
    if kind == "less_than" and "lt" in ctx:
        return Text("Less than {limit}.", limit=ctx["lt"])
    if kind in ("literal_error", "enum") and "expected" in ctx:
        return Text("One of: {choices}.", choices=ctx["expected"])
    return None


def field_message(error: Mapping[str, Any]) -> str:
    """One pydantic error (an entry of ``RequestValidationError.errors()``) as the field's message: an ``N_`` text
    or a ``Text``, never the framework's English."""
    kind = str(error.get("type", ""))
    ctx: Mapping[str, Any] = error.get("ctx") or {}
    if kind in ("value_error", "assertion_error"):
        # Our validators raise ValueError(message) with a text of ours (N_ or Text): kept as it is.
        raised = ctx.get("error")
        message = raised.args[0] if isinstance(raised, Exception) and raised.args else None
        return message if isinstance(message, str) and message else INVALID
    template = params.MESSAGES.get(kind)
    if template is not None:
        try:
            return Text(template, **ctx) if ctx else template
        except (KeyError, IndexError):
            return INVALID
    return _limited(kind, ctx) or FIXED.get(kind, INVALID)
