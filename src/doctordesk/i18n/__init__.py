"""English and German for everything people read: the translation function, the request's locale and the clinic
formats for dates, times and money (docs/web-app.md#language).

Texts are written in English in the code and wrapped in ``_()`` (the current request's locale) or ``t(locale, ...)``
(an explicit one, e.g. a push for another user); the German catalog is ``locales/de/LC_MESSAGES/messages.po``, read
with Babel when first needed. There is no compiled ``.mo`` to keep in step: the ``.po`` file is the only source.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache, lru_cache
from io import BytesIO
from pathlib import Path
from typing import Final

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import NullTranslations, Translations

from doctordesk.domain.texts import N_, Moment, Text
from doctordesk.i18n.formats import format_local
from doctordesk.i18n.locale import DEFAULT, LOCALES, current, use

__all__ = [
    "DEFAULT",
    "LOCALES",
    "Moment",
    "N_",
    "Text",
    "_",
    "current",
    "from_environment",
    "in_every_locale",
    "maybe",
    "negotiate",
    "stored",
    "t",
    "use",
]

CATALOG_DIR: Final = Path(__file__).parent / "locales"


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
    translated from its own template and values; values that are texts are translated too, and a ``Moment`` is
    written in the locale's date format."""
    if isinstance(msgid, Text):
        params = {**msgid.params, **params}
        msgid = msgid.msgid
    if locale == DEFAULT and not params:
        return str(msgid)
    text = translations(locale).gettext(msgid)
    if not params:
        return text
    return text.format(**{k: _value(locale, v) for k, v in params.items()})


def _value(locale: str, value: object) -> object:
    """A text's value in ``locale``: a text translated, an instant in the locale's date format."""
    if isinstance(value, Text):
        return t(locale, value)
    if isinstance(value, Moment):
        try:
            return format_local(value.at, value.timezone, locale)
        except (KeyError, ValueError):  # an unknown zone name: the instant in UTC
            return format_local(value.at, "UTC", locale)
    return value


def _(msgid: str, **params: object) -> str:
    """``msgid`` in the current request's locale."""
    return t(current(), msgid, **params)


def maybe(text: str | None) -> str | None:
    """``_(text)``, keeping None (optional notices and errors)."""
    return None if text is None else t(current(), text)


def stored(text: str | None) -> str | None:
    """A text read back from storage in the current locale: a ``Text`` (its template was kept) translated, any other
    text (typed by a person, or stored before templates were) as it is — user data never goes through the catalog."""
    return t(current(), text) if isinstance(text, Text) else text


def in_every_locale(msgid: str, **params: object) -> dict[str, str]:
    """The text in each locale (a push rendered once, sent in each recipient's language)."""
    return {locale: t(locale, msgid, **params) for locale in LOCALES}


def from_environment(environ: Mapping[str, str]) -> str:
    """The language of a command run in a terminal, the way gettext reads it: the first of ``LANGUAGE`` (a
    colon-separated list), ``LC_ALL``, ``LC_MESSAGES`` and ``LANG`` that is set, e.g. ``de_DE.UTF-8`` → ``de``
    (``C``, ``POSIX`` or a language not offered: English)."""
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name, "")
        if not value:
            continue
        for item in value.split(":"):
            primary = item.split(".")[0].split("@")[0].replace("-", "_").split("_")[0].lower()
            if primary in LOCALES:
                return primary
        if name != "LANGUAGE":
            return DEFAULT  # the first category that is set decides (gettext's own order)
    return DEFAULT


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
