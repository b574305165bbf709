"""Bulk Data Access 2.0 (docs/fhir.md#bulk-export): the kick-off's parameters as rules, the levels of an export and
the resource types each brings, and a job's states. Pure: no database, no web."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.event_kinds import EventKind
from doctordesk.domain.fhir.errors import NotSupported
from doctordesk.domain.texts import N_, Text

NDJSON = "application/fhir+ndjson"
# The ``_outputFormat`` values taken: the spec's own and its two short forms (Bulk Data 2.0, "Query Parameters").
OUTPUT_FORMATS = frozenset({NDJSON, "application/ndjson", "ndjson"})
QUEUED_EVENT = EventKind.BULK_QUEUED
PARAMETERS = ("_outputFormat", "_since", "_type")


class Level(StrEnum):
    """What an export covers: the clinic (``/$export``), every patient (``/Patient/$export``) or one doctor's
    panel (``/Group/<id>/$export``)."""

    SYSTEM = "system"
    PATIENT = "patient"
    GROUP = "group"


# The types each level brings, in the order they are written (the manifest lists them in this order). Patient and
# Group exports bring the patient compartment: the patients and their appointments.
TYPES: dict[Level, tuple[str, ...]] = {
    Level.SYSTEM: ("Patient", "Practitioner", "Location", "Appointment", "Group"),
    Level.PATIENT: ("Patient", "Appointment"),
    Level.GROUP: ("Patient", "Appointment"),
}
# Types that carry a change time (``meta.lastUpdated``): ``_since`` narrows only these; the others have none to
# compare and are always written (docs/fhir.md#bulk-export).
DATED = frozenset({"Appointment"})


class JobStatus(StrEnum):
    """``pending`` (queued or being written, under a lease) → ``complete`` | ``error``; ``cancelled`` by the
    requester (its files deleted at once). Expired jobs are deleted with their files."""

    PENDING = "pending"
    COMPLETE = "complete"
    ERROR = "error"
    CANCELLED = "cancelled"


def transaction_time(kicked_off: datetime, *, settle_seconds: int) -> datetime:
    """A job's transaction time: ``settle_seconds`` before the kick-off, to the whole second, as the manifest
    states it (``transactionTime``). The job writes what changed up to it and a next export asks ``_since=<it>``
    (changed after it), so each change is in exactly one of two chained exports: one stamped in the same second
    is not in both, and one stamped shortly before the kick-off whose transaction was still open then (its row not
    yet visible to the job) is in the next one rather than in neither."""
    return (kicked_off - timedelta(seconds=settle_seconds)).replace(microsecond=0)


@dataclass(frozen=True, slots=True)
class ExportRequest:
    """A kick-off's parameters, checked: the types to write (in the level's order) and the ``_since`` instant."""

    level: Level
    types: tuple[str, ...]
    since: datetime | None


_SINCE_HELP = N_("Use an instant with its offset, e.g. 2026-01-31T08:00:00Z.")
_INSTANT = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})", re.ASCII)


def parse_since(raw: str) -> datetime:
    """``_since``: a FHIR instant (a full date and time with its offset), years 1900–2999 as every date here."""
    match = _INSTANT.fullmatch(raw.strip())
    if match is None:
        raise ValidationFailed(fields={"_since": _SINCE_HELP})
    text = raw.strip().replace("Z", "+00:00")
    fraction = match.group(7)
    if fraction:  # Python reads at most six digits of a fraction
        text = text.replace(fraction, fraction[:7])
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValidationFailed(fields={"_since": _SINCE_HELP}) from None
    if not 1900 <= moment.year <= 2999 or moment.utcoffset() is None:
        raise ValidationFailed(fields={"_since": _SINCE_HELP})
    return moment.astimezone(UTC)


def _types(level: Level, values: Sequence[str]) -> tuple[str, ...]:
    offered = TYPES[level]
    if not values:
        return offered
    asked: set[str] = set()
    for value in values:
        for name in value.split(","):
            name = name.strip()
            if name not in offered:
                raise NotSupported(
                    Text(
                        "{kind} cannot be exported here; types exported: {types}.",
                        kind=repr(name),
                        types=", ".join(offered),
                    ),
                    fields={"_type": N_("A resource type this export brings.")},
                )
            asked.add(name)
    return tuple(t for t in offered if t in asked)


def export_request(level: Level, items: Sequence[tuple[str, str]]) -> ExportRequest:
    """The kick-off's query (``items`` as sent) checked: ``_outputFormat`` NDJSON or absent (else 400
    ``NOT_SUPPORTED``), ``_since`` an instant (else 400 ``FIELDS_VALIDATION_ERROR``), ``_type`` types this level
    exports (else 400 ``NOT_SUPPORTED``). Any other parameter (``_elements``, ``_typeFilter``, ``patient``,
    ``includeAssociatedData``…) is refused with 400 ``NOT_SUPPORTED``: an export that silently ignored a filter
    would hand over more than was asked for."""
    unknown = sorted({name for name, _ in items} - set(PARAMETERS))
    if unknown:
        raise NotSupported(fields=dict.fromkeys(unknown, N_("Not supported by this export.")))
    formats = [v for k, v in items if k == "_outputFormat"]
    if any(f.strip() not in OUTPUT_FORMATS for f in formats) or len(set(formats)) > 1:
        raise NotSupported(
            Text("Only {format} is written.", format=NDJSON),
            fields={"_outputFormat": N_("Use application/fhir+ndjson.")},
        )
    since_values = [v for k, v in items if k == "_since"]
    if len(since_values) > 1:
        raise ValidationFailed(fields={"_since": N_("Give one value.")})
    since = parse_since(since_values[0]) if since_values else None
    return ExportRequest(level, _types(level, [v for k, v in items if k == "_type"]), since)


def wants_async(prefer: str | None) -> bool:
    """Whether ``Prefer`` holds ``respond-async`` (required by the kick-off)."""
    return any(p.strip().lower() == "respond-async" for p in (prefer or "").replace(";", ",").split(","))


def file_name(resource_type: str) -> str:
    return f"{resource_type}.ndjson"
