"""What a session's device is called on the security page (docs/accounts.md#security-page): a short description
of the client that signed in, read from its ``User-Agent`` header with ``ua-parser`` ("Firefox on Windows",
"Chrome Mobile on Android"). The header itself is never kept: only the description is stored with the token.

The parser is ua-parser's built-in rules behind the best resolver installed (the Rust one, with
``ua-parser[regex]``), without the library's cache (which would keep the raw headers it saw in memory). Loading the
rules takes about half a second: the first sign-in of a process pays it (in a worker thread, web/deps.py)."""

from __future__ import annotations

import threading

from ua_parser import BestAvailableResolver, Domain, Parser, load_builtins

# A longer header is cut before it is parsed: real browsers send about 150 characters.
MAX_HEADER_CHARS = 512
# The access token's column: a description never gets longer.
MAX_DEVICE_CHARS = 120
# What the rules call a client or system they do not know.
_UNKNOWN = frozenset({"", "other"})

_lock = threading.Lock()
_parser: Parser | None = None


def _loaded() -> Parser:
    global _parser
    with _lock:
        if _parser is None:
            _parser = Parser(BestAvailableResolver(load_builtins()))
        return _parser


def _clean(family: str | None) -> str | None:
    """A family name as shown: one line of printable characters, None for an unknown one."""
    if family is None:
        return None
    text = " ".join("".join(c if c.isprintable() else " " for c in family).split())
    return None if text.lower() in _UNKNOWN else text


def name(client: str | None, system: str | None) -> str | None:
    """ "{client} on {system}", the known part alone when the other is unknown, None when neither is known; one line
    of printable characters, at most ``MAX_DEVICE_CHARS`` (some rules name a client by what its header says)."""
    known = [part for part in (_clean(client), _clean(system)) if part]
    text = " on ".join(known)[:MAX_DEVICE_CHARS].rstrip()
    return text or None


def describe(user_agent: str | None) -> str | None:
    """The description of a ``User-Agent`` header (``name``), None when there is none or nothing of it is known."""
    if not user_agent:
        return None
    result = _loaded()(user_agent[:MAX_HEADER_CHARS], Domain.USER_AGENT | Domain.OS)
    return name(
        result.user_agent.family if result.user_agent is not None else None,
        result.os.family if result.os is not None else None,
    )
