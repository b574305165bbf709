"""People's names in FHIR (docs/fhir.md#patient-and-practitioner-search): the service keeps one name text; FHIR's
HumanName reads its last word as ``family`` and the words before as ``given``. String search as R4 defines it:
a value matches when each of its words begins a word of the name part, ignoring case and accents; ``:exact`` is
the whole part, exactly."""

from __future__ import annotations

from typing import Any

from doctordesk.domain.list_filter import name_words


def parts(name: str) -> tuple[str, list[str]]:
    """(family, given) of a name text: the last whitespace-separated word, and the words before it."""
    words = name.split()
    if not words:
        return "", []
    return words[-1], words[:-1]


def human_name(name: str) -> dict[str, Any]:
    family, given = parts(name)
    out: dict[str, Any] = {"text": name}
    if family:
        out["family"] = family
    if given:
        out["given"] = given
    return out


def starts_words(value: str, target: str) -> bool:
    """Each word of ``value`` begins a word of ``target`` (case- and accent-insensitive)."""
    wanted = name_words(value)
    have = name_words(target)
    return bool(wanted) and all(any(h.startswith(w) for h in have) for w in wanted)


def part_matches(name: str, part: str, value: str, *, exact: bool) -> bool:
    """Whether ``value`` matches the ``part`` (``name``, ``family`` or ``given``) of ``name``."""
    family, given = parts(name)
    if part == "family":
        return family == value if exact else starts_words(value, family)
    if part == "given":
        return value in given if exact else starts_words(value, " ".join(given))
    return name == value if exact else starts_words(value, name)
