"""Patient and Practitioner search (docs/fhir.md#patient-and-practitioner-search): ``_id``, ``identifier``,
``name`` and, for patients, ``family``, ``given`` and ``birthdate``, with ``:exact``, ``:not`` and ``:missing``.
What SQL can decide runs in SQL (the name words' index narrows a name search); the name parts are then checked
on the rows read, batch by batch in the page's order, so a filter is always applied."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import Select, and_, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from doctordesk.domain.appointments.list_filter import name_words, prefix_end
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.domain.fhir import names as fhir_names
from doctordesk.domain.texts import N_, Text
from doctordesk.runtime import Runtime
from doctordesk.services.fhir import sorting
from doctordesk.services.fhir.access import Caller, patients_visible, require_some_scope
from doctordesk.services.fhir.directory import doctor_identifiers, patient, practitioner
from doctordesk.services.fhir.filters import Condition, missing_condition, split, token_conditions
from doctordesk.services.fhir.search import Checked, Search, bundle, check, missing
from doctordesk.services.fhir.sorting import Sort, SortKey
from doctordesk.services.scheduling.clinic_facts import cached_clinic
from doctordesk.store.tables import Patient, PatientNameWord

PATIENT_PARAMETERS = ("_id", "identifier", "name", "family", "given", "birthdate")
PATIENT_MODIFIERS = {
    "identifier": ("not", "missing"),
    "name": ("exact",),
    "family": ("exact",),
    "given": ("exact", "missing"),
    "birthdate": ("missing",),
}
PATIENT_SORTS = ("_id", "name", "family", "given", "birthdate")
PRACTITIONER_PARAMETERS = ("_id", "identifier", "name")
PRACTITIONER_SORTS = ("_id", "name")
BY_ID = (SortKey("_id"),)
PRACTITIONER_MODIFIERS = {"identifier": ("not", "missing"), "name": ("exact",)}
NAME_PARTS = ("name", "family", "given")
_BATCH = 200


def _identifier(system: str) -> Callable[[str], list[str]]:
    def read(value: str) -> list[str]:
        given_system, _, code = value.rpartition("|")
        if (given_system and given_system != system) or not code or len(code) > fhir_mapping.MAX_IDENTIFIER_CHARS:
            raise ValidationFailed(fields={"identifier": Text("Use {system}|<id> or <id>.", system=system)})
        return [code]

    return read


def _logical_id(value: str) -> list[int]:
    row_id = fhir_mapping.parse_logical_id(value)
    return [row_id] if row_id is not None else []


def _name_test(checked: Checked) -> Callable[[str], bool]:
    """The name parameters (each ANDed, commas ORed) as a test on a name text."""
    tests: list[tuple[str, bool, list[str]]] = []
    for part in NAME_PARTS:
        for exact in (False, True):
            for raw in checked.get(f"{part}:exact" if exact else part):
                tests.append((part, exact, split(raw)))
    wants_given = missing(checked, "given")

    def holds(name: str) -> bool:
        if wants_given is not None and (not fhir_names.parts(name)[1]) != wants_given:
            return False
        return all(any(fhir_names.part_matches(name, p, v, exact=e) for v in values) for p, e, values in tests)

    return holds


def _word_prefilter(checked: Checked) -> list[Condition]:
    """The name words' index for the name parameters that are not exact: each value's words begin words of the
    patient's name (a superset of the matches; the name parts are checked on the rows)."""
    out: list[Condition] = []
    for part in NAME_PARTS:
        for raw in checked.get(part):
            options = []
            for value in split(raw):
                words = [
                    Patient.id.in_(
                        select(PatientNameWord.patient_id).where(
                            PatientNameWord.word >= w, PatientNameWord.word < prefix_end(w)
                        )
                    )
                    for w in sorted(name_words(value))
                ]
                options.append(and_(*words) if words else Patient.id < 0)
            out.append(or_(*options))
    for raw in checked.get("name:exact"):
        out.append(Patient.name.in_(split(raw)))
    return out


def _birth_day(moment: datetime) -> date:
    """The first birth date whose day starts at or after ``moment`` (a day begins at 00:00 UTC here)."""
    day = moment.astimezone(UTC).date()
    return day if moment == datetime(day.year, day.month, day.day, tzinfo=UTC) else day + timedelta(days=1)


def _birthdate_conditions(checked: Checked) -> list[Condition]:
    for raw in checked.get("birthdate"):
        if "T" in raw:
            raise ValidationFailed(fields={"birthdate": N_("Use a date (YYYY, YYYY-MM or YYYY-MM-DD) with a prefix.")})
    conditions: list[Condition] = []
    for test in fhir_mapping.date_tests(checked.get("birthdate"), name="birthdate", now=checked.now):
        parts: list[Condition] = []
        if test.lo is not None:
            parts.append(Patient.birth_date >= _birth_day(test.lo))
        if test.hi is not None:
            parts.append(Patient.birth_date < _birth_day(test.hi))
        inside = and_(*parts) if parts else Patient.birth_date.is_not(None)
        conditions.append(inside if test.inside else ~inside)
    return conditions + missing_condition(checked, "birthdate", Patient.birth_date)


# The columns of a patient's sort keys: the name's parts folded (``fhir_names.sort_keys``), the birth date with a
# missing one after every date.
_NO_BIRTH_DATE = date.max
_PATIENT_COLUMNS: dict[str, Any] = {
    "_id": Patient.id,
    "family": Patient.family_key,
    "given": Patient.given_key,
    "name": Patient.name_key,
    "birthdate": func.coalesce(Patient.birth_date, _NO_BIRTH_DATE),
}


def _patient_values(sort: Sort, p: Patient) -> tuple[Any, ...]:
    """A patient's values under ``sort`` as the database orders them, then the id (a page's cursor)."""
    own = {
        "_id": p.id,
        "family": p.family_key,
        "given": p.given_key,
        "name": p.name_key,
        "birthdate": p.birth_date or _NO_BIRTH_DATE,
    }
    return (*(own[k.name] for k in sort), p.id)


async def _matching(
    session: AsyncSession,
    query: Select[Patient],
    test: Callable[[str], bool],
    limit: int | None,
    *,
    sort: Sort = BY_ID,
    after: tuple[Any, ...] | None = None,
) -> list[Patient]:
    """The rows of ``query`` in the order of ``sort``, after ``after`` (a cursor's values), whose name passes
    ``test``: up to ``limit`` (None: all). Read in batches, each continuing after the last row read."""
    ordered = query.order_by(*sorting.order_by(sort, _PATIENT_COLUMNS, Patient.id))
    found: list[Patient] = []
    while limit is None or len(found) < limit:
        page = ordered if after is None else ordered.where(sorting.beyond(sort, _PATIENT_COLUMNS, Patient.id, after))
        batch = list((await session.scalars(page.limit(_BATCH))).all())
        found.extend(p for p in batch if test(p.name))
        if len(batch) < _BATCH:
            break
        after = _patient_values(sort, batch[-1])
    return found if limit is None else found[:limit]


def sort_values(sort: Sort, row_id: int, name: str) -> tuple[Any, ...]:
    """A practitioner's values under ``sort`` (the name's parts, as a patient's), then the id."""
    family, given, full = fhir_names.sort_keys(name)
    own = {"_id": row_id, "family": family, "given": given, "name": full}
    return (*(own[k.name] for k in sort), row_id)


def patient_conditions(checked: Checked) -> list[Condition]:
    """What SQL decides of a Patient search (the name parts: only the name words' index, a superset)."""
    system = fhir_mapping.PATIENT_IDENTIFIER_SYSTEM
    return [
        *token_conditions(checked, "_id", Patient.id, _logical_id, nullable=False),
        *token_conditions(checked, "identifier", Patient.external_id, _identifier(system)),
        *_birthdate_conditions(checked),
        *_word_prefilter(checked),
    ]


def names_tested(checked: Checked) -> bool:
    """Whether the search has name parameters that SQL alone does not decide (checked on the rows)."""
    return any(checked.has(p) for p in ("name", "family", "given", "family:exact", "given:exact", "given:missing"))


# A chain's patients up to this many are given to the appointment search as their ids (its planner then reads
# each one's appointments by (patient, start)); more, and it gets the subquery (such a chain finds a page soon).
CHAIN_IDS = 500


async def patient_ids(session: AsyncSession, caller: Caller, checked: Checked) -> Any:
    """The patients ``caller`` may see that match ``checked`` (a Patient search's parameters, for a chain): their
    ids where SQL decides (a subquery when there are more than ``CHAIN_IDS``), else the ids of the rows the name
    words' index narrowed to, each name checked."""
    query = patients_visible(select(Patient.id), caller).where(*patient_conditions(checked))
    if not names_tested(checked):
        ids = list((await session.scalars(query.limit(CHAIN_IDS + 1))).all())
        return ids if len(ids) <= CHAIN_IDS else query
    test = _name_test(checked)
    rows = (await session.execute(query.add_columns(Patient.name))).all()
    return sorted(row_id for row_id, name in rows if test(name))


async def search_patients(rt: Runtime, caller: Caller, request: Search) -> dict[str, Any]:
    """The patients the caller may see, by ``PATIENT_PARAMETERS``, in id order or by ``_sort``: keyset pages in the
    database's order (the sort keys' columns), the name parts checked on the rows read."""
    checked = check(
        request, PATIENT_PARAMETERS, sorts=PATIENT_SORTS, default_sort=BY_ID, modifiers=PATIENT_MODIFIERS, totals=True
    )
    checked.now = rt.clock.now()
    query = patients_visible(select(Patient), caller).where(*patient_conditions(checked))
    test = _name_test(checked)
    async with rt.db.read() as session:
        total = len(await _matching(session, query, test, None)) if checked.total else None
        rows: list[Patient] = []
        if not checked.only_count:
            limit = checked.count + 1
            rows = await _matching(session, query, test, limit, sort=checked.sort, after=checked.sort_after)
    return bundle(
        request,
        checked,
        rows,
        to_resource=patient,
        position=lambda p: sorting.encode_cursor(checked.sort, _patient_values(checked.sort, p)),
        total=total,
    )


def practitioner_matches(checked: Checked, doctors: Mapping[int, str], identifiers: Mapping[int, str]) -> list[int]:
    """The doctors (id → name, with their clinic ids) that match a Practitioner search's parameters."""
    read_identifier = _identifier(fhir_mapping.PRACTITIONER_IDENTIFIER_SYSTEM)
    test = _name_test(checked)
    wanted_missing = missing(checked, "identifier")

    def keeps(doctor_id: int) -> bool:
        own = identifiers.get(doctor_id)
        for raw in checked.get("_id"):
            if doctor_id not in [i for v in split(raw) for i in _logical_id(v)]:
                return False
        for raw in checked.get("identifier"):
            if own not in [i for v in split(raw) for i in read_identifier(v)]:
                return False
        for raw in checked.get("identifier:not"):
            if own in [i for v in split(raw) for i in read_identifier(v)]:
                return False
        if wanted_missing is not None and (own is None) != wanted_missing:
            return False
        return test(doctors[doctor_id])

    return [d for d in doctors if keeps(d)]


async def search_practitioners(rt: Runtime, caller: Caller, request: Search) -> dict[str, Any]:
    """The clinic's doctors (the cached directory, a few dozen), by ``PRACTITIONER_PARAMETERS``."""
    checked = check(
        request,
        PRACTITIONER_PARAMETERS,
        sorts=PRACTITIONER_SORTS,
        default_sort=BY_ID,
        modifiers=PRACTITIONER_MODIFIERS,
        totals=True,
    )
    require_some_scope(caller)
    async with rt.db.read() as session:
        c = await cached_clinic(rt, session)
        identifiers = await doctor_identifiers(session, c.directory.doctors)

    def values(doctor_id: int) -> tuple[Any, ...]:
        return sort_values(checked.sort, doctor_id, c.directory.doctors[doctor_id])

    matches = practitioner_matches(checked, c.directory.doctors, identifiers)
    limit = 0 if checked.only_count else checked.count + 1
    rows = sorting.page_in_memory(checked.sort, matches, values, checked.sort_after, limit)
    return bundle(
        request,
        checked,
        rows,
        to_resource=lambda d: practitioner(c, d, identifiers.get(d)),
        position=lambda d: sorting.encode_cursor(checked.sort, values(d)),
        total=len(matches),
    )
