"""People's names in FHIR (docs/fhir.md#patient-and-practitioner-search): the service keeps one name text; FHIR's
HumanName reads its last word as ``family``, the words before as ``given`` and leading words with a dot
(``Dr.``) as ``prefix``. String search as R4 defines it:
a value matches when each of its words begins a word of the name part, ignoring case and accents; ``:exact`` is
the whole part, exactly."""

from __future__ import annotations

from typing import Any

from doctordesk.domain.appointments.list_filter import name_words


def _split(name: str) -> tuple[list[str], str, list[str]]:
    """(prefixes, family, given): leading words ending in a dot (``Dr.``) are prefixes, the last word is the
    family name, the words between are given names."""
    words = name.split()
    prefixes: list[str] = []
    while len(words) > 1 and words[0].endswith("."):
        prefixes.append(words.pop(0))
    if not words:
        return prefixes, "", []
    return prefixes, words[-1], words[:-1]


def parts(name: str) -> tuple[str, list[str]]:
    """(family, given) of a name text."""
    _, family, given = _split(name)
    return family, given


def sort_keys(name: str) -> tuple[str, str, str]:
    """A name's values under ``_sort`` (decision, docs/fhir.md#sorting): ``family``, ``given`` (the given names in
    order) and ``name`` (family, a tab, then given), each folded to compare ignoring case."""
    family, given = parts(name)
    given_text = " ".join(given)
    return family.casefold(), given_text.casefold(), f"{family}\t{given_text}".casefold()


def human_name(name: str) -> dict[str, Any]:
    prefixes, family, given = _split(name)
    out: dict[str, Any] = {"text": name}
    if family:
        out["family"] = family
    if given:
        out["given"] = given
    if prefixes:
        out["prefix"] = prefixes
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
