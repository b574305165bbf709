"""The real-time message (spec 2.1 and 6.1): one string of up to two space-separated components.

    Timeout <endpoint>   cancel the patch timers, PATCH the current screen's endpoint, and PATCH <endpoint>
    Timeout              cancel the patch timers and PATCH the current screen's endpoint
    <endpoint>           PATCH <endpoint> now; the poll schedule stays as it is
    (empty)              nothing to do (heartbeats carry it)

The same string is the SSE event's data and the custom data string of a push notification. This module is the
one parser and formatter of it; it is pure: which paths are PATCH endpoints of the service is passed in (an
``EndpointMatcher`` built from route templates such as ``/profile/appointments/{appointment-id}/approve``).

The grammar is strict, so that the server, the Python SDK and the web client agree on every string (they all test
against ``vectors.json`` beside this module): components are separated by exactly one space, there is no leading
or trailing whitespace, the keyword is the literal ``Timeout`` (case-sensitive) and comes first, and an endpoint is
a path (no query, no fragment) that matches one of the PATCH route templates, where a ``{parameter}`` matches one
positive decimal id.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import resources
from typing import Any

TIMEOUT = "Timeout"
MAX_ENDPOINT_CHARS = 256
# A path parameter of a PATCH template: a positive decimal id without leading zeros (ids are < 2**53).
PARAMETER_PATTERN = "[1-9][0-9]{0,15}"
_TEMPLATE_PARAMETER = re.compile(r"\{[^{}/]+\}")

EndpointCheck = Callable[[str], bool]


class InvalidMessage(ValueError):
    """The string is not a real-time message."""


@dataclass(frozen=True, slots=True)
class RealtimeMessage:
    """What a client does on receiving the message: ``timeout`` (reset the timers and poll the current screen)
    and/or PATCH ``endpoint``."""

    timeout: bool = False
    endpoint: str | None = None

    def __str__(self) -> str:
        return format_message(timeout=self.timeout, endpoint=self.endpoint)

    @property
    def empty(self) -> bool:
        return not self.timeout and self.endpoint is None


EMPTY = RealtimeMessage()
TIMEOUT_ONLY = RealtimeMessage(timeout=True)


class EndpointMatcher:
    """Decides whether a path is a PATCH endpoint of the service, from the PATCH route templates."""

    def __init__(self, templates: Iterable[str]) -> None:
        self.templates = tuple(sorted(set(templates)))
        alternatives = [_template_regex(t) for t in self.templates]
        self._regex = re.compile("|".join(f"(?:{a})" for a in alternatives)) if alternatives else None

    def __call__(self, path: str) -> bool:
        if self._regex is None or len(path) > MAX_ENDPOINT_CHARS:
            return False
        return self._regex.fullmatch(path) is not None


def _template_regex(template: str) -> str:
    if not template.startswith("/"):
        raise ValueError(f"a PATCH template is an absolute path: {template!r}")
    parts = _TEMPLATE_PARAMETER.split(template)
    return PARAMETER_PATTERN.join(re.escape(p) for p in parts)


def normalize_template(template: str) -> str:
    """``/a/{appointment_id}/b`` and ``/a/{appointment-id}/b`` name the same endpoint: ``/a/{}/b``."""
    return _TEMPLATE_PARAMETER.sub("{}", template)


def parse(text: str, *, is_endpoint: EndpointCheck) -> RealtimeMessage:
    """The message in ``text``; ``InvalidMessage`` when it is not one."""
    if text == "":
        return EMPTY
    parts = text.split(" ")
    if len(parts) > 2:
        raise InvalidMessage("at most two space-separated components")
    if any(p == "" or p != p.strip() for p in parts):
        raise InvalidMessage("components are separated by exactly one space, without other whitespace")
    if len(parts) == 2:
        keyword, endpoint = parts
        if keyword != TIMEOUT:
            raise InvalidMessage(f"the first of two components must be {TIMEOUT!r}")
        _check_endpoint(endpoint, is_endpoint)
        return RealtimeMessage(timeout=True, endpoint=endpoint)
    (only,) = parts
    if only == TIMEOUT:
        return TIMEOUT_ONLY
    _check_endpoint(only, is_endpoint)
    return RealtimeMessage(endpoint=only)


def _check_endpoint(endpoint: str, is_endpoint: EndpointCheck) -> None:
    if not endpoint.startswith("/") or len(endpoint) > MAX_ENDPOINT_CHARS or not is_endpoint(endpoint):
        raise InvalidMessage(f"not a PATCH endpoint of the service: {endpoint[:80]!r}")


def format_message(*, timeout: bool = False, endpoint: str | None = None) -> str:
    """The canonical string: ``Timeout <endpoint>``, ``Timeout``, ``<endpoint>`` or ``""``."""
    if endpoint is not None and (not endpoint.startswith("/") or any(c.isspace() for c in endpoint)):
        raise InvalidMessage(f"an endpoint is a path without whitespace: {endpoint[:80]!r}")
    if timeout and endpoint:
        return f"{TIMEOUT} {endpoint}"
    if timeout:
        return TIMEOUT
    return endpoint or ""


def load_vectors() -> dict[str, Any]:
    """The shared test vectors (``vectors.json``): the PATCH templates and message → expected outcome."""
    text = resources.files("doctordesk.realtime").joinpath("vectors.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def vectors_matcher() -> EndpointMatcher:
    """The matcher over the PATCH templates listed in the vectors file (what clients use without the app)."""
    return EndpointMatcher(load_vectors()["patch_endpoints"])
