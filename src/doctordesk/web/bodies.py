"""The base of every JSON request body: unknown fields refused, and every text in it held to the free-text rule
(domain/inputs.py): no control characters, and line breaks only in the fields a body names as multi-line."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

from doctordesk.domain.inputs import text_problem


def _problem(value: Any, *, multiline: bool) -> str | None:
    if isinstance(value, str):
        return text_problem(value, max_chars=None, multiline=multiline)
    if isinstance(value, list | tuple):
        return next((p for v in value if (p := _problem(v, multiline=multiline))), None)
    return None


class StrictBody(BaseModel):
    """A JSON body: extra fields refused, text checked (``MULTILINE`` names the fields that may hold line breaks)."""

    model_config = ConfigDict(extra="forbid")
    MULTILINE: ClassVar[frozenset[str]] = frozenset()

    @field_validator("*", mode="after")
    @classmethod
    def _plain_text(cls, value: Any, info: ValidationInfo) -> Any:
        problem = _problem(value, multiline=info.field_name in cls.MULTILINE)
        if problem is not None:
            raise ValueError(problem)
        return value
