"""English and German for everything people read: the translation function, the request's locale and the clinic
formats for dates, times and money (docs/web-app.md#language).

Texts are written in English in the code and wrapped in ``_()`` (the current request's locale) or ``t(locale, ...)``
(an explicit one, e.g. a push for another user); the German catalog is ``locales/de/LC_MESSAGES/messages.po``, read
with Babel when first needed. There is no compiled ``.mo`` to keep in step: the ``.po`` file is the only source.
"""

from __future__ import annotations

from contextvars import ContextVar
from functools import cache, lru_cache
from io import BytesIO
from pathlib import Path
from typing import Final

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import NullTranslations, Translations

from doctordesk.domain.texts import N_, Text

__all__ = ["DEFAULT", "LOCALES", "N_", "Text", "_", "current", "in_every_locale", "maybe", "negotiate", "t", "use"]

LOCALES: Final = ("en", "de")
DEFAULT: Final = "en"
CATALOG_DIR: Final = Path(__file__).parent / "locales"

_current: ContextVar[str] = ContextVar("doctordesk_locale", default=DEFAULT)


def use(locale: str) -> None:
    """Make ``locale`` the current request's (an unknown one falls back to English)."""
    _current.set(locale if locale in LOCALES else DEFAULT)


def current() -> str:
    return _current.get()


def catalog_path(locale: str) -> Path:
    return CATALOG_DIR / locale / "LC_MESSAGES" / "messages.po"


@cache
def translations(locale: str) -> NullTranslations:
    """The catalog of ``locale``, read from its ``.po`` file once (English: the msgids themselves)."""
    if locale == DEFAULT or locale not in LOCALES:
        return NullTranslations()
    with catalog_path(locale).open("rb") as f:
        catalog = read_po(f, locale=locale)
    buffer = BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    buffer.seek(0)
    return Translations(fp=buffer)


def t(locale: str, msgid: str, **params: object) -> str:
    """``msgid`` in ``locale``, its ``{placeholders}`` filled from ``params``. A ``Text`` (from the rules) is
    translated from its own template and values; values that are texts are translated too."""
    if isinstance(msgid, Text):
        params = {**msgid.params, **params}
        msgid = msgid.msgid
    if locale == DEFAULT and not params:
        return str(msgid)
    text = translations(locale).gettext(msgid)
    if not params:
        return text
    values = {k: t(locale, v) if isinstance(v, Text) else v for k, v in params.items()}
    return text.format(**values)


def _(msgid: str, **params: object) -> str:
    """``msgid`` in the current request's locale."""
    return t(_current.get(), msgid, **params)


def maybe(text: str | None) -> str | None:
    """``_(text)``, keeping None (optional notices and errors)."""
    return None if text is None else t(_current.get(), text)


def in_every_locale(msgid: str, **params: object) -> dict[str, str]:
    """The text in each locale (a push rendered once, sent in each recipient's language)."""
    return {locale: t(locale, msgid, **params) for locale in LOCALES}


@lru_cache(maxsize=512)
def negotiate(accept_language: str | None) -> str:
    """The best of ``LOCALES`` for an ``Accept-Language`` header (q-values honoured; English when none fits)."""
    if not accept_language:
        return DEFAULT
    ranked: list[tuple[float, int, str]] = []
    for index, part in enumerate(accept_language.split(",")[:20]):
        tag, _sep, rest = part.strip().partition(";")
        quality = 1.0
        rest = rest.strip()
        if rest.startswith("q="):
            try:
                quality = float(rest[2:])
            except ValueError:
                quality = 0.0
        primary = tag.strip().split("-")[0].lower()
        if primary in LOCALES and quality > 0:
            ranked.append((-quality, index, primary))
    return min(ranked)[2] if ranked else DEFAULT
