"""FHIR search as this interface runs it (docs/fhir.md#search): the parameters a search knows, unknown ones
ignored with a warning (or refused with ``Prefer: handling=strict``), keyset paging with a ``_cursor`` in the
``next`` link, and the searchset Bundle."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from doctordesk.domain.cursors import decode_cursor, encode_cursor
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.domain.fhir.errors import NotSupported
from doctordesk.domain.keyset import Position
from doctordesk.domain.texts import N_, Text
from doctordesk.i18n import _
from doctordesk.services.fhir import sorting
from doctordesk.services.fhir.sorting import Sort

# Known to every search: paging, sort, format and the elements shown. ``_total`` and ``_summary`` only where the
# search can count (``check(..., totals=True)``).
COMMON = frozenset({"_count", "_sort", "_cursor", "_format", "_elements"})
TOTALS = frozenset({"_total", "_summary"})
FORMATS = frozenset({"json", "application/json", fhir_mapping.MEDIA_TYPE})
TOTAL_VALUES = frozenset({"none", "estimate", "accurate"})
SUMMARY_VALUES = frozenset({"count", "false"})
# Elements a resource keeps whatever ``_elements`` says (R4: the mandatory ones, id and meta).
MANDATORY: dict[str, frozenset[str]] = {
    "Appointment": frozenset({"status", "participant"}),
    "AppointmentResponse": frozenset({"appointment", "participantStatus"}),
    "Slot": frozenset({"schedule", "status", "start", "end"}),
    "Schedule": frozenset({"actor"}),
    "Communication": frozenset({"status"}),
    "Subscription": frozenset({"status", "reason", "criteria", "channel"}),
    "AuditEvent": frozenset({"type", "recorded", "agent", "source"}),
}
SUBSETTED = {"system": "http://terminology.hl7.org/CodeSystem/v3-ObservationValue", "code": "SUBSETTED"}
_ELEMENT = re.compile(r"[a-z][A-Za-z0-9]{0,63}", re.ASCII)


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
    """The known parameters of a search (by name, with its modifier: ``status:not``), the warnings for those
    ignored, the page size and where it starts, and what the Bundle shows (total, elements)."""

    params: dict[str, list[str]]
    warnings: list[dict[str, Any]] = field(default_factory=list)
    count: int = fhir_mapping.DEFAULT_COUNT
    after: Position | None = None
    sort: Sort = ()  # the sort applied (the search's default when ``_sort`` named none it offers)
    sort_after: tuple[Any, ...] | None = None  # a sorted search's cursor: the last row's sort values and id
    sort_given: str | None = None  # the ``_sort`` applied, for the links (None: not given or nothing applied)
    total: bool = False  # _total=accurate/estimate or _summary=count: Bundle.total
    only_count: bool = False  # _summary=count: no entries
    elements: frozenset[str] | None = None
    now: datetime | None = None  # the clock's time, for ``ap`` dates (set by the search)

    def has(self, name: str) -> bool:
        return name in self.params

    def get(self, name: str) -> list[str]:
        return self.params.get(name, [])


def _known(name: str, allowed: set[str], modifiers: Mapping[str, Collection[str]]) -> bool:
    base, colon, modifier = name.partition(":")
    if not colon:
        return name in allowed
    return base in allowed and modifier in modifiers.get(base, ())


def check(
    search: Search,
    known: Iterable[str],
    *,
    sorts: Sequence[str] | None = None,
    default_sort: Sort = (),
    modifiers: Mapping[str, Collection[str]] | None = None,
    totals: bool = False,
) -> Checked:
    """Split the parameters into known ones and the rest (refused when strict, else each ignored with a warning
    and left out of the self link); read ``_count``, ``_cursor``, ``_format``, ``_sort`` (``sorts``: the keys
    offered, ``default_sort`` without one; keys not offered are treated as unknown parameters), ``_elements``
    and, with ``totals``, ``_total`` and ``_summary``. ``modifiers``: the modifiers each parameter takes
    (``not``, ``missing``, ``exact``); any other is an unknown parameter."""
    allowed = set(known) | COMMON | (TOTALS if totals else set())
    params: dict[str, list[str]] = {}
    unknown: list[str] = []
    for name, value in search.items:
        if _known(name, allowed, modifiers or {}):
            params.setdefault(name, []).append(value)
        elif name not in unknown:
            unknown.append(name)
    sort, unsorted = sorting.parse(params["_sort"][-1], sorts or ()) if "_sort" in params else ((), [])
    if (unknown or unsorted) and search.strict:
        raise NotSupported(
            N_("Unknown search parameters (Prefer: handling=strict)."),
            fields={
                **dict.fromkeys(unknown, N_("Not a search parameter of this resource here.")),
                **({"_sort": _not_offered(unsorted, sorts)} if unsorted else {}),
            },
        )
    checked = Checked(params)
    checked.warnings = [
        fhir_mapping.issue(
            "NOT_SUPPORTED",
            _(Text("The search parameter {name} is not supported here and was ignored.", name=repr(name))),
            severity="warning",
            expression=name,
        )
        for name in unknown
    ] + [
        fhir_mapping.issue(
            "NOT_SUPPORTED",
            _(
                Text(
                    "The sort {key} is not supported here and was ignored (offered: {offered}).",
                    key=repr(key),
                    offered=_offered(sorts),
                )
            ),
            severity="warning",
            expression="_sort",
        )
        for key in unsorted
    ]
    checked.sort = sort or default_sort
    checked.sort_given = sorting.sort_text(sort) if sort else None
    for value in params.get("_format", []):
        if value not in FORMATS:
            raise NotSupported(N_("Only JSON is served."), status=406, fields={"_format": N_("Use json.")})
    checked.count = fhir_mapping.count(params.get("_count", []))
    _result_parameters(checked, params)
    if checked.count == 0:  # R4: as _summary=count (the total where this search counts)
        checked.only_count, checked.total = True, totals
    for name, values in params.items():
        if name.endswith(":missing") and any(v not in ("true", "false") for v in values):
            raise ValidationFailed(fields={name: N_("Use true or false.")})
    cursors = params.get("_cursor", [])
    if cursors and sorts is not None:
        checked.sort_after = sorting.decode_cursor(checked.sort, cursors[-1])
    elif cursors:
        try:
            checked.after = decode_cursor(cursors[-1])
        except ValidationFailed:
            raise ValidationFailed(fields={"_cursor": N_("Not a page link this service gave out.")}) from None
    return checked


def _offered(sorts: Sequence[str] | None) -> str:
    return ", ".join(sorts or ()) or "—"


def _not_offered(unsorted: Sequence[str], sorts: Sequence[str] | None) -> str:
    return Text("Not offered: {keys}. Offered: {offered}.", keys=", ".join(unsorted), offered=_offered(sorts))


def _result_parameters(checked: Checked, params: Mapping[str, list[str]]) -> None:
    """``_total``, ``_summary`` and ``_elements`` (the last value of each counts)."""
    totals = params.get("_total", [])
    if totals:
        if totals[-1] not in TOTAL_VALUES:
            raise ValidationFailed(fields={"_total": N_("Use none, estimate or accurate.")})
        checked.total = totals[-1] != "none"
    summaries = params.get("_summary", [])
    if summaries:
        if summaries[-1] not in SUMMARY_VALUES:
            raise NotSupported(fields={"_summary": N_("Supported: count, false.")})
        if summaries[-1] == "count":
            checked.total = checked.only_count = True
    elements = fhir_mapping.token_list(params.get("_elements", []))
    if "_elements" in params:
        if not elements or any(_ELEMENT.fullmatch(e) is None for e in elements):
            raise ValidationFailed(fields={"_elements": N_("Name top-level elements, e.g. _elements=status,start.")})
        checked.elements = frozenset(elements)


def missing(checked: Checked, name: str) -> bool | None:
    """``name:missing``: True (only resources without it), False (only those with it) or None (not asked)."""
    values = checked.get(f"{name}:missing")
    if not values:
        return None
    if len(set(values)) > 1:
        raise ValidationFailed(fields={f"{name}:missing": N_("Give one value: true or false.")})
    return values[0] == "true"


def references(search: Checked, name: str, resource_type: str) -> list[int] | None:
    """The ids a reference parameter on a single reference allows: commas OR ids, repeated parameters AND them
    (their intersection); None when absent. A value naming another type or malformed is refused."""
    if name not in search.params:
        return None
    allowed: set[int] | None = None
    for raw in search.params[name]:
        ids: set[int] = set()
        for value in fhir_mapping.token_list([raw]):
            row_id = fhir_mapping.reference_id(value, resource_type)
            if row_id is None:
                raise ValidationFailed(fields={name: Text("Use {resource_type}/<id>.", resource_type=resource_type)})
            ids.add(row_id)
        allowed = ids if allowed is None else allowed & ids
    return sorted(allowed or ())


def subset(resource: dict[str, Any], elements: frozenset[str] | None) -> dict[str, Any]:
    """``_elements``: the resource with only the elements named (and its mandatory ones, id and meta), marked
    SUBSETTED."""
    if elements is None:
        return resource
    keep = elements | MANDATORY.get(resource["resourceType"], frozenset()) | {"resourceType", "id", "meta"}
    out = {k: v for k, v in resource.items() if k in keep}
    meta = dict(out.get("meta", {}))
    meta["tag"] = [*meta.get("tag", []), SUBSETTED]
    out["meta"] = meta
    return out


def _applied(search: Search, checked: Checked) -> list[tuple[str, str]]:
    """The parameters applied, in the order sent; ``_sort`` once, as applied (keys not offered left out)."""
    kept: list[tuple[str, str]] = []
    for k, v in search.items:
        if k == "_sort":
            if checked.sort_given is not None and all(name != "_sort" for name, _ in kept):
                kept.append((k, checked.sort_given))
        elif k in checked.params:
            kept.append((k, v))
    return kept


def self_link(search: Search, checked: Checked) -> str:
    """The search as it was run: only the parameters applied (R4 search, "Server Conformance")."""
    kept = _applied(search, checked)
    url = f"{search.base_url}/{search.resource_type}"
    return f"{url}?{urlencode(kept)}" if kept else url


def bundle(
    search: Search,
    checked: Checked,
    rows: Sequence[Any],
    *,
    to_resource: Callable[[Any], dict[str, Any]],
    position: Callable[[Any], Position | str] | None,
    included: Sequence[dict[str, Any]] = (),
    total: int | None = None,
) -> dict[str, Any]:
    """A searchset Bundle of the first ``checked.count`` of ``rows`` (one more was read, to know whether a next
    page exists; ``position`` gives the last one's cursor), the ``included`` resources, ``self`` and ``next``
    links, ``total`` when counted, and the warnings as an OperationOutcome entry. With ``_summary=count`` only
    the total and the warnings."""
    shown = [] if checked.only_count else rows[: checked.count]
    kept = [(k, v) for k, v in _applied(search, checked) if k != "_cursor"]
    url = f"{search.base_url}/{search.resource_type}"
    links = [{"relation": "self", "url": self_link(search, checked)}]
    if len(rows) > checked.count and position is not None and shown:
        last = position(shown[-1])  # a Position, or a sorted search's cursor
        cursor = last if isinstance(last, str) else encode_cursor(last)
        links.append({"relation": "next", "url": f"{url}?{urlencode([*kept, ('_cursor', cursor)])}"})
    entries: list[dict[str, Any]] = []
    for row in shown:
        resource = subset(to_resource(row), checked.elements)
        entries.append(
            {
                "fullUrl": f"{search.base_url}/{resource['resourceType']}/{resource['id']}",
                "resource": resource,
                "search": {"mode": "match"},
            }
        )
    for resource in [] if checked.only_count else included:
        entries.append(
            {
                "fullUrl": f"{search.base_url}/{resource['resourceType']}/{resource['id']}",
                "resource": resource,
                "search": {"mode": "include"},
            }
        )
    if checked.warnings:
        entries.append({"resource": fhir_mapping.outcome(checked.warnings), "search": {"mode": "outcome"}})
    result: dict[str, Any] = {"resourceType": "Bundle", "type": "searchset"}
    if checked.total and total is not None:
        result["total"] = total
    result["link"] = links
    if entries:
        result["entry"] = entries
    return result
