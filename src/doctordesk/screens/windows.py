"""How far down each section of a list screen the client shows: its "show more" windows, carried in the state token.

A window is the position of the last row the client was shown after its latest "show more"; a section without
one shows its first page. The token is ``{screen state}~{window}:{window}...`` with one slot per section, in the
screen's order, each empty or ``{microseconds since the epoch}_{id}``; without any window the token is the plain
screen state. Like every state token it is not a credential: a window only says how far to read, and the reads
still apply the viewer's rights. Anything malformed counts as "no windows" (the client gets the first pages).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta

from doctordesk.domain.inputs import MAX_ID
from doctordesk.domain.keyset import Position

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_SLOT = re.compile(r"(-?(?:0|[1-9][0-9]{0,17}))_([1-9][0-9]{0,15})", re.ASCII)

Windows = Mapping[str, Position]


def _encode(position: Position) -> str:
    return f"{(position.at - _EPOCH) // _MICROSECOND}_{position.id}"


def _decode(slot: str) -> Position | None:
    match = _SLOT.fullmatch(slot)
    if match is None or int(match[2]) > MAX_ID:
        return None
    try:
        return Position(_EPOCH + int(match[1]) * _MICROSECOND, int(match[2]))
    except OverflowError:
        return None


def join_state(inner: str, windows: Windows, sections: Sequence[str]) -> str:
    """The state token naming the screen state ``inner`` and the windows of ``sections``."""
    if not any(key in windows for key in sections):
        return inner
    return inner + "~" + ":".join(_encode(windows[key]) if key in windows else "" for key in sections)


def split_state(token: str | None, sections: Sequence[str]) -> tuple[str | None, dict[str, Position]]:
    """The screen state and the windows a token carries."""
    if not token:
        return None, {}
    inner, sep, suffix = token.rpartition("~")
    if not sep:
        return token, {}
    slots = suffix.split(":")
    windows: dict[str, Position] = {}
    if len(slots) != len(sections):
        return inner, {}
    for key, slot in zip(sections, slots, strict=True):
        if not slot:
            continue
        position = _decode(slot)
        if position is None:
            return inner, {}
        windows[key] = position
    return inner, windows
