"""Bulk import: check every row, then upsert the good ones by external id in one transaction.

Nothing is written when any row is bad, unless ``skip_invalid``; a dry run does the whole import and rolls it back,
so its counts are exact. A second run of the same file finds every row unchanged and writes nothing.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import insert, update
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk import i18n
from doctordesk.domain.appointments.status import PENDING, Status
from doctordesk.domain.events import appointment_topic, doctor_topic, patient_topic
from doctordesk.domain.names import shown
from doctordesk.domain.roles import Role
from doctordesk.domain.texts import N_, Text
from doctordesk.domain.transfer.import_rows import KIND_ORDER, CheckedRow, Kind, Problem, check_row
from doctordesk.realtime import relay
from doctordesk.services.audit.entries import audit
from doctordesk.services.transfer.import_events import import_events
from doctordesk.services.transfer.import_files import RawRow
from doctordesk.services.uow import worker_transaction
from doctordesk.store import external_ids, name_words
from doctordesk.store.db import Database
from doctordesk.store.tables import AppointmentHistory, Base, DoctorProfile

# Not an argon2 hash: no password verifies against it, so an imported account cannot log in until an admin sets one.
NO_PASSWORD = "!imported"
PROGRESS_STEP = 500


class Progress(Protocol):
    """Where the import reports how far it is (the CLI draws a bar)."""

    def phase(self, name: str, total: int) -> None: ...

    def advance(self, count: int) -> None: ...


class NoProgress:
    def phase(self, name: str, total: int) -> None:
        pass

    def advance(self, count: int) -> None:
        pass


@dataclass(frozen=True, slots=True)
class BadRow:
    source: str
    kind: Kind
    line: int
    field: str
    reason: str

    def __str__(self) -> str:
        return self.in_language(i18n.DEFAULT)

    def in_language(self, locale: str) -> str:
        """``FILE:LINE: KIND: FIELD: REASON``, the reason in ``locale`` (kinds and fields are the file's names; a
        field name's invisible and control characters are shown as escapes, so a file cannot write to the
        terminal)."""
        name = shown(self.field) if self.field else "row"
        return f"{self.source}:{self.line}: {self.kind.value}: {name}: {i18n.t(locale, self.reason)}"


@dataclass(slots=True)
class Counts:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    invalid: int = 0


@dataclass
class ImportReport:
    source: str
    counts: dict[Kind, Counts] = field(default_factory=dict)
    bad_rows: list[BadRow] = field(default_factory=list)
    written: bool = False
    dry_run: bool = False

    @property
    def changes(self) -> int:
        return sum(c.created + c.updated for c in self.counts.values())

    @property
    def invalid(self) -> int:
        """Bad rows, each counted once however many problems it has (rows may share a line in a JSON file)."""
        return sum(c.invalid for c in self.counts.values())


class _RollBack(Exception):
    pass


async def import_rows(
    db: Database,
    rows: Sequence[RawRow],
    *,
    source: str,
    now: datetime,
    skip_invalid: bool = False,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> ImportReport:
    """Check and import ``rows`` (read from ``source``); the report says what was created, updated, unchanged and
    which rows are bad (every problem, with its line). Audited: one audit row per run that changed something."""
    progress = progress or NoProgress()
    checked = await asyncio.to_thread(check_all, rows, progress)
    report = ImportReport(source=source, dry_run=dry_run)
    try:
        async with worker_transaction(db) as session:
            run = _Run(session, checked, source=source, now=now, progress=progress)
            await run.check_stored()
            report.bad_rows = [
                BadRow(source, row.kind, row.line, p.field, p.reason) for row in checked for p in row.problems
            ]
            report.bad_rows.sort(key=lambda b: b.line)
            for row in checked:
                report.counts.setdefault(row.kind, Counts()).invalid += 0 if row.ok else 1
            if report.bad_rows and not skip_invalid:
                raise _RollBack
            await run.write(report.counts)
            await relay.stage(session, import_events(report.counts, run.appointment_topics), now=now)
            if report.changes:
                audit(
                    session,
                    at=now,
                    actor_id=None,
                    action="import",
                    entity="import",
                    entity_id=None,
                    details={
                        "source": source,
                        "counts": {k.value: _counts_dict(c) for k, c in report.counts.items()},
                    },
                )
            if dry_run:
                raise _RollBack
            report.written = True
    except _RollBack:
        pass
    return report


def _counts_dict(counts: Counts) -> dict[str, int]:
    return {
        "created": counts.created,
        "updated": counts.updated,
        "unchanged": counts.unchanged,
        "invalid": counts.invalid,
    }


def check_all(rows: Sequence[RawRow], progress: Progress) -> list[CheckedRow]:
    """Every row checked on its own, and external ids used twice in the file (the later rows are bad)."""
    progress.phase(N_("checking"), len(rows))
    first: dict[tuple[Kind, str], CheckedRow] = {}
    checked: list[CheckedRow] = []
    for index, raw in enumerate(rows, start=1):
        row = check_row(raw.kind, raw.line, raw.fields)
        if raw.problems:
            # A row that is not a row (a JSON non-object, a CSV line of the wrong width) has only that problem.
            named = {p.field for p in raw.problems}
            rest = [] if "" in named else [p for p in row.problems if p.field not in named]
            row.problems = [*raw.problems, *rest]
        ext = row.values.get("external_id")
        if ext:
            seen = first.setdefault((row.kind, ext), row)
            if seen is not row:  # rows, not lines: a JSON file may hold several rows on one line
                row.problems.append(Problem("external_id", Text("also on line {line}", line=seen.line)))
        checked.append(row)
        if index % PROGRESS_STEP == 0:
            progress.advance(PROGRESS_STEP)
    progress.advance(len(rows) % PROGRESS_STEP)
    return checked


class _Run:
    def __init__(
        self, session: AsyncSession, rows: list[CheckedRow], *, source: str, now: datetime, progress: Progress
    ) -> None:
        self.session = session
        self.source = source
        self.now = now
        self.progress = progress
        self.by_kind: dict[Kind, list[CheckedRow]] = defaultdict(list)
        for row in rows:
            self.by_kind[row.kind].append(row)
        # Stored rows of each kind with an external id the file uses, and ids to resolve references by.
        self.existing: dict[Kind, dict[str, dict[str, Any]]] = {}
        self.ids: dict[Kind, dict[str, int]] = defaultdict(dict)
        self.appointment_topics: set[str] = set()  # of the appointments created or changed, before and after

    async def check_stored(self) -> None:
        """What needs the database: references resolve, doctors' accounts and usernames are theirs."""
        referenced: dict[Kind, set[str]] = defaultdict(set)
        for rows in self.by_kind.values():
            for row in rows:
                for _field, kind, ref in row.references():
                    referenced[kind].add(ref)
        for kind in KIND_ORDER:
            own = {row.external_id for row in self.by_kind[kind] if row.external_id}
            self.existing[kind] = await external_ids.rows_by_external_id(self.session, kind, own)
            self.ids[kind] = await external_ids.ids_by_external_id(self.session, kind, referenced[kind] - own)
            if kind is Kind.DOCTORS:
                await self._check_doctors(self.by_kind[kind])
            for ext, stored in self.existing[kind].items():
                if kind is not Kind.DOCTORS or stored["role"] == Role.DOCTOR.value:
                    self.ids[kind][ext] = stored["id"]
        valid: dict[Kind, set[str]] = defaultdict(set)
        bad: dict[Kind, set[str]] = defaultdict(set)
        for kind in KIND_ORDER:
            for row in self.by_kind[kind]:
                # Every reference that could be read is checked, on bad rows too: the report names every problem.
                for name, ref_kind, ref in row.references():
                    if ref in valid[ref_kind] or ref in self.ids[ref_kind]:
                        continue
                    why = Text("a bad row of this file") if ref in bad[ref_kind] else Text("not found")
                    missing = Text("{kind} {ref}: {why}", kind=ref_kind.value, ref=repr(ref), why=why)
                    row.problems.append(Problem(name, missing))
                (valid if row.ok else bad)[kind].add(row.external_id)

    async def _check_doctors(self, rows: list[CheckedRow]) -> None:
        existing = self.existing[Kind.DOCTORS]
        usernames: dict[str, CheckedRow] = {}
        for row in rows:
            stored = existing.get(row.external_id)
            if stored is not None and stored["role"] != Role.DOCTOR.value:
                row.problems.append(Problem("external_id", Text("belongs to a {role} account", role=stored["role"])))
            name = row.values.get("username")
            if name:
                first = usernames.setdefault(name, row)
                if first is not row:
                    row.problems.append(Problem("username", Text("also on line {line}", line=first.line)))
        owners = await external_ids.users_by_username(self.session, list(usernames))
        for row in rows:
            name = row.values.get("username")
            if name in owners and owners[name] != row.external_id:
                row.problems.append(Problem("username", N_("taken by another account")))

    async def write(self, counts: dict[Kind, Counts]) -> None:
        self.progress.phase(N_("writing"), sum(1 for rows in self.by_kind.values() for row in rows if row.ok))
        for kind in KIND_ORDER:
            rows = [row for row in self.by_kind[kind] if row.ok]
            if rows:
                await _WRITERS[kind](self, rows, counts.setdefault(kind, Counts()))

    async def insert(self, kind: Kind, batch: list[dict[str, Any]]) -> None:
        """Insert new rows and learn their ids: one executemany and one look-up by external id per batch."""
        # Core's executemany on the table: the ORM's bulk insert splits a batch wherever the None fields differ.
        await self.session.execute(insert(external_ids.MODELS[kind].__table__), batch)
        found = await external_ids.ids_by_external_id(self.session, kind, [values["external_id"] for values in batch])
        self.ids[kind].update(found)

    def ref(self, kind: Kind, ext: str) -> int:
        return self.ids[kind][ext]

    async def upsert(
        self,
        kind: Kind,
        rows: list[CheckedRow],
        counts: Counts,
        *,
        desired: Callable[[CheckedRow], dict[str, Any]],
        on_create: dict[str, Any] | None = None,
        on_update: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    ) -> tuple[list[dict[str, Any]], list[tuple[dict[str, Any], dict[str, Any]]]]:
        """Insert new rows, update changed ones; returns (created, [(stored, updated values)])."""
        model = external_ids.MODELS[kind]
        existing = self.existing[kind]
        created: list[dict[str, Any]] = []
        changed: list[tuple[dict[str, Any], dict[str, Any]]] = []
        for row in rows:
            want = desired(row)
            stored = existing.get(row.external_id)
            if stored is None:
                created.append({**want, **(on_create or {}), "external_id": row.external_id})
                continue
            want = row.carried(want)
            if any(not _same(stored[column], value) for column, value in want.items()):
                extra = on_update(stored) if on_update else {}
                changed.append((stored, {**want, **extra, "id": stored["id"]}))
            else:
                counts.unchanged += 1
        for start in range(0, len(created), external_ids.CHUNK):
            batch = created[start : start + external_ids.CHUNK]
            await self.insert(kind, batch)
            self.progress.advance(len(batch))
        for values in created:
            values["id"] = self.ids[kind][values["external_id"]]
        if changed:
            await self.session.execute(update(model), [values for _stored, values in changed])
        self.progress.advance(len(changed) + counts.unchanged)
        counts.created += len(created)
        counts.updated += len(changed)
        return created, changed


def _same(stored: Any, wanted: Any) -> bool:
    if isinstance(wanted, dict):
        return isinstance(stored, dict) and _lists(stored) == wanted
    return bool(stored == wanted)


def _lists(document: dict[str, Any]) -> dict[str, Any]:
    """A network or exclusions document without its empty lists (both forms mean the same)."""
    return {k: v for k, v in document.items() if v not in ([], None)}


async def _locations(run: _Run, rows: list[CheckedRow], counts: Counts) -> None:
    await run.upsert(
        Kind.LOCATIONS,
        rows,
        counts,
        desired=lambda r: {k: r.values[k] for k in ("name", "address", "timezone")},
    )


async def _doctors(run: _Run, rows: list[CheckedRow], counts: Counts) -> None:
    """A doctor is an account and its profile, compared and counted as one row."""
    existing = run.existing[Kind.DOCTORS]
    new_users: list[dict[str, Any]] = []
    new_profiles: list[dict[str, Any]] = []
    changed_users: list[dict[str, Any]] = []
    changed_profiles: list[dict[str, Any]] = []
    for row in rows:
        v = row.values
        user = {"username": v["username"], "display_name": v["name"], "role": Role.DOCTOR.value}
        profile = {c: v[c] for c in external_ids.PROFILE_COLUMNS}
        stored = existing.get(row.external_id)
        if stored is None:
            new_users.append(
                {
                    **user,
                    "external_id": row.external_id,
                    "password_hash": NO_PASSWORD,
                    "active": True,
                    "created_at": run.now,
                }
            )
            new_profiles.append({"external_id": row.external_id, **profile})
            continue
        user_changed = any(stored[c] != value for c, value in user.items())
        if user_changed:
            changed_users.append({"id": stored["id"], **user})
        profile_changed = True
        kept = row.carried(profile)
        if stored["profile_user_id"] is None:
            new_profiles.append({"external_id": row.external_id, **profile})
        elif any(stored[f"profile_{c}"] != value for c, value in kept.items()):
            changed_profiles.append({"user_id": stored["id"], **kept})
        else:
            profile_changed = False
        if user_changed or profile_changed:
            counts.updated += 1
        else:
            counts.unchanged += 1
    model = external_ids.MODELS[Kind.DOCTORS]
    for start in range(0, len(new_users), external_ids.CHUNK):
        batch = new_users[start : start + external_ids.CHUNK]
        await run.insert(Kind.DOCTORS, batch)
    counts.created += len(new_users)
    if changed_users:
        await run.session.execute(update(model), changed_users)
    profiles = [{"user_id": run.ref(Kind.DOCTORS, p.pop("external_id")), **p} for p in new_profiles]
    if profiles:
        await run.session.execute(insert(Base.metadata.tables[DoctorProfile.__tablename__]), profiles)
    if changed_profiles:
        await run.session.execute(update(DoctorProfile), changed_profiles)
    run.progress.advance(len(rows))


async def _hours(run: _Run, rows: list[CheckedRow], counts: Counts) -> None:
    def desired(row: CheckedRow) -> dict[str, Any]:
        v = row.values
        return {
            "doctor_id": run.ref(Kind.DOCTORS, v["doctor"]),
            "location_id": run.ref(Kind.LOCATIONS, v["location"]),
            "weekday": v["weekday"],
            "start_time": v["start"],
            "end_time": v["end"],
        }

    await run.upsert(Kind.HOURS, rows, counts, desired=desired)


async def _patients(run: _Run, rows: list[CheckedRow], counts: Counts) -> None:
    await run.upsert(
        Kind.PATIENTS,
        rows,
        counts,
        desired=lambda r: {"name": r.values["name"], "birth_date": r.values["birth_date"], "email": r.values["email"]},
    )
    # Bulk writes bypass the ORM's events: the name search's words are written here.
    await name_words.sync(run.session, run.ids[Kind.PATIENTS].values())


async def _policies(run: _Run, rows: list[CheckedRow], counts: Counts) -> None:
    def desired(row: CheckedRow) -> dict[str, Any]:
        v = row.values
        network = {
            "doctors": [run.ref(Kind.DOCTORS, d) for d in v["network_doctors"]],
            "locations": [run.ref(Kind.LOCATIONS, loc) for loc in v["network_locations"]],
        }
        exclusions = {
            "services": list(v["excluded_services"]),
            "doctors": [run.ref(Kind.DOCTORS, d) for d in v["excluded_doctors"]],
        }
        return {
            "patient_id": run.ref(Kind.PATIENTS, v["patient"]),
            "insurer": v["insurer"],
            "policy_number": v["policy_number"],
            "valid_from": v["valid_from"],
            "valid_to": v["valid_to"],
            "network": _lists(network),
            "exclusions": _lists(exclusions),
            "third_party_data": v["third_party_data"],
        }

    await run.upsert(Kind.POLICIES, rows, counts, desired=desired)


async def _appointments(run: _Run, rows: list[CheckedRow], counts: Counts) -> None:
    stored_rows = run.existing[Kind.APPOINTMENTS]

    def desired(row: CheckedRow) -> dict[str, Any]:
        v = row.values
        status: Status = v["status"]
        stored = stored_rows.get(row.external_id)
        # "pending-response" names both pending codes: a stored coverage-risk pending keeps its code.
        if stored is not None and status in PENDING and stored["status"] in PENDING:
            status = Status(stored["status"])
        return {
            "patient_id": run.ref(Kind.PATIENTS, v["patient"]),
            "doctor_id": run.ref(Kind.DOCTORS, v["doctor"]),
            "location_id": run.ref(Kind.LOCATIONS, v["location"]),
            "start_at": v["start"],
            "duration_minutes": v["duration_minutes"],
            "status": int(status),
            "service": v["service"],
            "decline_reason": v["decline_reason"],
            "chat_enabled": v["chat_enabled"],
            "disclaimer_required": v["disclaimer_required"],
            "prescription_needed": v["prescription_needed"],
        }

    created, changed = await run.upsert(
        Kind.APPOINTMENTS,
        rows,
        counts,
        desired=desired,
        on_create={"version": 1, "created_at": run.now, "updated_at": run.now},
        on_update=lambda stored: {"version": stored["version"] + 1, "updated_at": run.now},
    )
    for values in [*created, *(values for _stored, values in changed), *(stored for stored, _values in changed)]:
        run.appointment_topics.update(
            (appointment_topic(values["id"]), doctor_topic(values["doctor_id"]), patient_topic(values["patient_id"]))
        )
    details = {"note": "imported", "source": run.source}
    history = [
        {"appointment_id": c["id"], "at": run.now, "from_status": None, "to_status": c["status"], "details": details}
        for c in created
    ]
    history += [
        {
            "appointment_id": stored["id"],
            "at": run.now,
            "from_status": stored["status"],
            "to_status": values["status"],
            "details": details,
        }
        for stored, values in changed
        if stored["status"] != values["status"]
    ]
    for start in range(0, len(history), external_ids.CHUNK):
        await run.session.execute(
            insert(Base.metadata.tables[AppointmentHistory.__tablename__]), history[start : start + external_ids.CHUNK]
        )


_WRITERS = {
    Kind.LOCATIONS: _locations,
    Kind.DOCTORS: _doctors,
    Kind.HOURS: _hours,
    Kind.PATIENTS: _patients,
    Kind.POLICIES: _policies,
    Kind.APPOINTMENTS: _appointments,
}
