"""The base of every JSON request body: unknown fields refused, every text in it held to the free-text rule
(domain/inputs.py): no control characters, and line breaks only in the fields a body names as multi-line; every
date and instant held to the accepted range (domain/moments.py: the years 1900-2999, offsets up to ±14:00)."""

from __future__ import annotations

import types
from collections.abc import Callable
from datetime import date, time
from typing import Annotated, Any, ClassVar, Union, get_args, get_origin

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    GetJsonSchemaHandler,
    NaiveDatetime,
    ValidationInfo,
    field_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from doctordesk.domain import moments
from doctordesk.domain.inputs import MULTI_LINE_TEXT_PATTERN, TEXT_PATTERN, text_problem
from doctordesk.domain.texts import N_

STATED_DATES = {"date": moments.DAY_PATTERN, "date-time": moments.INSTANT_PATTERN}


def describe_text(schema: dict[str, Any], *, multiline: bool) -> None:
    """State the free-text rule in a JSON Schema (and the accepted years on dates): every text without a stricter
    rule of its own (enum, format, pattern) gets the rule's pattern; nullable and list fields included."""
    for option in schema.get("anyOf", []):
        describe_text(option, multiline=multiline)
    if isinstance(schema.get("items"), dict):
        describe_text(schema["items"], multiline=multiline)
    if schema.get("type") == "string" and schema.get("format") in STATED_DATES and "pattern" not in schema:
        schema["pattern"] = STATED_DATES[schema["format"]]  # the accepted range (the body's dates are read by moments)
    if schema.get("type") == "string" and not {"enum", "format", "pattern", "const"} & set(schema):
        schema["pattern"] = MULTI_LINE_TEXT_PATTERN if multiline else TEXT_PATTERN


def stated(**keywords: Any) -> Callable[[dict[str, Any]], None]:
    """A ``json_schema_extra`` for a rule the service judges itself (so that its refusal is its own message, in
    the reader's language, as for PUT /profile/language): ``keywords`` (JSON Schema: ``enum``, ``minLength``,
    ``pattern``, ``maximum``...) go on the field's value schema, on each non-null option of a nullable field.
    Pass the service's own constants, so that the description and the check cannot drift apart."""

    def apply(schema: dict[str, Any]) -> None:
        for option in schema.get("anyOf") or [schema]:
            if option.get("type") != "null":
                option.update(keywords)

    return apply


def _problem(value: Any, *, multiline: bool) -> str | None:
    if isinstance(value, str):
        return text_problem(value, max_chars=None, multiline=multiline)
    if isinstance(value, date):
        return moments.problem(value)
    if isinstance(value, list | tuple):
        return next((p for v in value if (p := _problem(v, multiline=multiline))), None)
    return None


def _scalars(annotation: Any) -> set[Any]:
    """The plain types a field's annotation allows (through Annotated, unions and Optional)."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _scalars(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return {t for arg in get_args(annotation) for t in _scalars(arg)}
    return {annotation}


_TEMPORAL = (date, time, AwareDatetime, NaiveDatetime)


def _json_type_problem(value: Any, allowed: set[Any]) -> str | None:
    """JSON's own types: ``0`` is not false, ``"1"`` and ``1.0`` are not 1, and a date or time is text (a number
    is not read as seconds since 1970)."""
    kinds = allowed - {type(None)}
    if value is None or not kinds:
        return None
    if kinds == {bool} and not isinstance(value, bool):
        return N_("Use true or false.")
    if kinds == {int} and type(value) is not int:
        return N_("A whole number.")
    if all(isinstance(k, type) and issubclass(k, _TEMPORAL) for k in kinds) and not isinstance(value, str):
        return N_("A date or time as text (ISO 8601).")
    return None


class StrictBody(BaseModel):
    """A JSON body: extra fields refused, text checked (``MULTILINE`` names the fields that may hold line breaks)."""

    model_config = ConfigDict(extra="forbid")
    MULTILINE: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        schema = handler(core_schema)
        resolved = handler.resolve_ref_schema(schema)
        for name, field in resolved.get("properties", {}).items():
            describe_text(field, multiline=name in cls.MULTILINE)
        return schema

    @field_validator("*", mode="before")
    @classmethod
    def _json_types(cls, value: Any, info: ValidationInfo) -> Any:
        assert info.field_name is not None
        problem = _json_type_problem(value, _scalars(cls.model_fields[info.field_name].annotation))
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("*", mode="after")
    @classmethod
    def _plain_text(cls, value: Any, info: ValidationInfo) -> Any:
        problem = _problem(value, multiline=info.field_name in cls.MULTILINE)
        if problem is not None:
            raise ValueError(problem)
        return value
