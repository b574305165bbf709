"""The languages the service speaks and the current request's language (a context variable): what the texts and
the formats both read."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Final

LOCALES: Final = ("en", "de")
DEFAULT: Final = "en"

_current: ContextVar[str] = ContextVar("doctordesk_locale", default=DEFAULT)


def use(locale: str) -> None:
    """Make ``locale`` the current request's (an unknown one falls back to English)."""
    _current.set(locale if locale in LOCALES else DEFAULT)


def current() -> str:
    return _current.get()
