"""Texts for people, written in English where the rules produce them and translated where they are shown.

``N_("...")`` marks a fixed text for the catalog; ``Text("... {n} ...", n=2)`` is a text with values: a ``str``
(the English, so it behaves as before everywhere) that keeps its template and values, so the web layer can give it
in the reader's language (``doctordesk.i18n._``) without parsing it back.
"""

from __future__ import annotations

from typing import Any


def N_(msgid: str) -> str:  # noqa: N802 - the gettext convention
    """Marks ``msgid`` for the catalog; it is translated where it is shown."""
    return msgid


class Text(str):
    """The English text, with its template (``msgid``) and values (``params``) for translation."""

    msgid: str
    params: dict[str, Any]

    def __new__(cls, msgid: str, **params: Any) -> Text:
        obj = super().__new__(cls, msgid.format(**params) if params else msgid)
        obj.msgid = msgid
        obj.params = params
        return obj
