"""FHIR search as this interface runs it (docs/fhir.md#search): the parameters a search knows, unknown ones
ignored with a warning (or refused with ``Prefer: handling=strict``), keyset paging with a ``_cursor`` in the
``next`` link, and the searchset Bundle."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from doctordesk.domain.cursors import decode_cursor, encode_cursor
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.fhir import mapping as fhir
from doctordesk.domain.fhir.errors import NotSupported
from doctordesk.domain.keyset import Position

# Known to every search: paging, sort and format.
COMMON = frozenset({"_count", "_sort", "_cursor", "_format"})
FORMATS = frozenset({"json", "application/json", fhir.MEDIA_TYPE})


@dataclass(frozen=True, slots=True)
class Search:
    """A search's parameters as sent (name → values, in order) and what the caller asked for."""

    base_url: str  # the interface's base, e.g. http://host/fhir
    resource_type: str
    items: Sequence[tuple[str, str]]
    strict: bool = False

    def values(self, name: str) -> list[str]:
        return [v for k, v in self.items if k == name]


@dataclass(slots=True)
class Checked:
    """The known parameters of a search, the warnings for those ignored, the page size and where it starts."""

    params: dict[str, list[str]]
    warnings: list[dict[str, Any]] = field(default_factory=list)
    count: int = fhir.DEFAULT_COUNT
    after: Position | None = None
    descending: bool = False


def check(search: Search, known: Iterable[str], *, sorts: Mapping[str, bool] | None = None) -> Checked:
    """Split the parameters into known ones and the rest (refused when strict, else each ignored with a warning);
    read ``_count``, ``_cursor``, ``_format`` and ``_sort`` (``sorts``: accepted value → descending)."""
    allowed = set(known) | COMMON
    params: dict[str, list[str]] = {}
    unknown: list[str] = []
    for name, value in search.items:
        if name in allowed:
            params.setdefault(name, []).append(value)
        elif name not in unknown:
            unknown.append(name)
    if unknown and search.strict:
        raise NotSupported(
            "Unknown search parameters (Prefer: handling=strict).",
            fields=dict.fromkeys(unknown, "Not a search parameter of this resource here."),
        )
    checked = Checked(params)
    checked.warnings = [
        fhir.issue(
            "NOT_SUPPORTED",
            f"The search parameter {name!r} is not supported here and was ignored.",
            severity="warning",
            expression=name,
        )
        for name in unknown
    ]
    for value in params.get("_format", []):
        if value not in FORMATS:
            raise NotSupported("Only JSON is served.", status=406, fields={"_format": "Use json."})
    checked.count = fhir.count(params.get("_count", []))
    sort_values = params.get("_sort", [])
    if sort_values:
        wanted = sort_values[-1]
        if sorts is None or wanted not in sorts:
            options = ", ".join(sorts or ()) or "none"
            raise NotSupported(fields={"_sort": f"Supported: {options}."})
        checked.descending = sorts[wanted]
    cursors = params.get("_cursor", [])
    if cursors:
        try:
            checked.after = decode_cursor(cursors[-1])
        except ValidationFailed:
            raise ValidationFailed(fields={"_cursor": "Not a page link this service gave out."}) from None
    return checked


def references(search: Checked, name: str, resource_type: str) -> list[int] | None:
    """The ids a reference parameter names (ORed); None when absent. A value naming another type or malformed is
    refused."""
    values = fhir.token_list(search.params.get(name, []))
    if name not in search.params:
        return None
    ids: list[int] = []
    for value in values:
        row_id = fhir.reference_id(value, resource_type)
        if row_id is None:
            raise ValidationFailed(fields={name: f"Use {resource_type}/<id>."})
        ids.append(row_id)
    return ids


def bundle(
    search: Search,
    checked: Checked,
    rows: Sequence[Any],
    *,
    to_resource: Callable[[Any], dict[str, Any]],
    position: Callable[[Any], Position] | None,
    included: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """A searchset Bundle of the first ``checked.count`` of ``rows`` (one more was read, to know whether a next
    page exists), the ``included`` resources, ``self`` and ``next`` links and the warnings as an OperationOutcome
    entry."""
    shown = rows[: checked.count]
    kept = [(k, v) for k, v in search.items if k in checked.params and k != "_cursor"]
    url = f"{search.base_url}/{search.resource_type}"
    links = [{"relation": "self", "url": f"{url}?{urlencode(search.items)}" if search.items else url}]
    if len(rows) > checked.count and position is not None and shown:
        cursor = encode_cursor(position(shown[-1]))
        links.append({"relation": "next", "url": f"{url}?{urlencode([*kept, ('_cursor', cursor)])}"})
    entries: list[dict[str, Any]] = []
    for row in shown:
        resource = to_resource(row)
        entries.append(
            {
                "fullUrl": f"{search.base_url}/{resource['resourceType']}/{resource['id']}",
                "resource": resource,
                "search": {"mode": "match"},
            }
        )
    for resource in included:
        entries.append(
            {
                "fullUrl": f"{search.base_url}/{resource['resourceType']}/{resource['id']}",
                "resource": resource,
                "search": {"mode": "include"},
            }
        )
    if checked.warnings:
        entries.append({"resource": fhir.outcome(checked.warnings), "search": {"mode": "outcome"}})
    result: dict[str, Any] = {"resourceType": "Bundle", "type": "searchset", "link": links}
    if entries:
        result["entry"] = entries
    return result
