"""FHIR searches for one doctor and one week, with 1,000 and 100,000 appointments in the clinic (its three doctors in
turn, every 30 minutes): ``GET /fhir/Appointment?practitioner=…&date=ge…&date=lt…`` (one page of 50), the week's
Slots of the doctor's schedule (every status, and only the taken ones) and ``Appointment/$find`` for the doctor,
p50/p99, against the unchanged poll of the appointment list in the same run. Then the search parameters of
docs/fhir.md#search-and-paging, as the doctor: Patient by ``identifier``, ``family`` and ``birthdate`` (the clinic has
one patient per ten appointments, each with a clinic id, a family name of its own and a birth date of its own; the
history's appointments are theirs in turn), Practitioner by ``name``, Appointment by ``_id``, ``_lastUpdated=ge``
(the week's appointments were changed now, the history when it took place), ``actor`` (patient1, who has only the
demo's and the week's), ``status:not=fulfilled`` and the week's ``_summary=count``; a chain
(``patient.identifier`` of one bench patient) and patient1's ``$everything`` (first page). The searched week holds
the same appointments in every case (the first ``IN_WEEK``); the rest are history before it, so only the size of the
clinic changes between cases.

Runs the app in-process (httpx ASGI transport, no network), one fresh database per case, the cases interleaved
(one request of each in turn). SQLite always; PostgreSQL too when ``DOCTORDESK_BENCH_POSTGRES_URL`` names a server
database to connect through (the benchmark creates and drops databases of its own there).

    python -m bench fhir            (or: make bench BENCH=fhir)
    DOCTORDESK_BENCH_FHIR_SIZES=200,2000 DOCTORDESK_BENCH_REQUESTS=20 python -m bench fhir   (a smoke run)
Targets: each search's p50 at the largest size / at the smallest ≤ 1.5; the Appointment search's p50 ≤ 10 ms on
SQLite.
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import func, insert, select, text
from sqlalchemy.ext.asyncio import async_sessionmaker
from tests.support.appointments import appointment_row

from bench.common import percentile, table
from bench.suites import on_each_database, reported, signed_in_client
from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.domain.appointments.status import Status
from doctordesk.domain.fhir import names as fhir_names
from doctordesk.store import name_words
from doctordesk.store.db import create_engine
from doctordesk.store.migrate import upgrade
from doctordesk.store.seed import demo as seed
from doctordesk.store.tables import Appointment, Patient, User

NOW = datetime(2026, 11, 23, 7, 0, tzinfo=UTC)
SIZES = tuple(int(n) for n in os.environ.get("DOCTORDESK_BENCH_FHIR_SIZES", "1000,100000").split(","))
REQUESTS = int(os.environ.get("DOCTORDESK_BENCH_REQUESTS", "200"))
WARMUP = 20
WEEK_START = datetime(2026, 12, 7, tzinfo=UTC)
WEEK = "date=ge2026-12-07T00:00:00Z&date=lt2026-12-14T00:00:00Z"
IN_WEEK = 180  # 60 for each doctor: more than one page of 50
SLOT_WEEK = "start=ge2026-12-07T00:00:00Z&start=lt2026-12-14T00:00:00Z"
SEARCHES = (
    "Appointment", "Slot", "Slot taken", "$find", "Pat ident", "Pat family", "Pat birth", "Pract name", "Appt _id",
    "Appt _lastUpd", "Appt actor", "Appt st:not", "Appt count", "Appt chain", "Everything",
)  # fmt: skip
PATIENTS_PER_APPOINTMENT = 10  # the clinic's patients: one per ten appointments
FIRST_BIRTH = date(1940, 1, 1)
SOUGHT = 9  # the bench patient searched for: its first appointment (IN_WEEK + 9, divisible by 3) is doctor1's


def bench_patient(i: int) -> dict[str, Any]:
    return {
        "name": f"Given{i % 50} Family{i:06d}",
        "birth_date": FIRST_BIRTH + timedelta(days=i),
        "external_id": f"bench-{i}",
    }


def searches(ids: dict[str, Any]) -> dict[str, str]:
    doctor, berlin = ids["doctor1"], ids["location:berlin"]
    schedule = f"/fhir/Slot?schedule=Schedule/{doctor}-{berlin}&{SLOT_WEEK}&_count=200"
    appointment = "/fhir/Appointment?"
    return {
        "Appointment": f"{appointment}practitioner=Practitioner/{doctor}&{WEEK}&_count=50",
        "Slot": schedule,
        "Slot taken": f"{schedule}&status=busy,busy-tentative",
        "$find": f"/fhir/Appointment/$find?start=2026-12-07&end=2026-12-13&practitioner={doctor}&location={berlin}",
        "Pat ident": f"/fhir/Patient?identifier=urn:doctordesk:patient-external-id|bench-{SOUGHT}",
        "Pat family": f"/fhir/Patient?family=Family{SOUGHT:06d}",
        "Pat birth": f"/fhir/Patient?birthdate={FIRST_BIRTH + timedelta(days=SOUGHT)}",
        "Pract name": f"/fhir/Practitioner?name={ids['doctor1:family']}",
        "Appt _id": f"{appointment}_id={ids['week:first']}",
        "Appt _lastUpd": f"{appointment}_lastUpdated=ge{NOW.date()}&_count=50",
        "Appt actor": f"{appointment}actor=Patient/{ids['patient1']}&_count=50",
        "Appt st:not": f"{appointment}status:not=fulfilled&_count=50",
        "Appt count": f"{appointment}practitioner=Practitioner/{doctor}&{WEEK}&_summary=count",
        "Appt chain": f"{appointment}patient.identifier=bench-{SOUGHT}&_count=50",
        "Everything": f"/fhir/Patient/{ids['patient1']}/$everything?_count=50",
    }


@dataclass
class Case:
    url: str
    appointments: int
    search_ms: dict[str, list[float]] = field(default_factory=lambda: {name: [] for name in SEARCHES})
    poll_ms: list[float] = field(default_factory=list)
    found: dict[str, int] = field(default_factory=dict)


async def _prepare(url: str, appointments: int) -> dict[str, Any]:
    """The demo clinic and ``appointments`` more, spread over its doctors, half behind and half ahead of now."""
    engine = create_engine(url)
    await upgrade(engine)
    sessions = async_sessionmaker(engine, expire_on_commit=False)
    async with sessions() as session, session.begin():
        demo = await seed.seed_demo(session, Passwords(time_cost=1, memory_kib=1024), NOW)
        doctors = [demo.users[d] for d in ("doctor1", "doctor2", "doctor3")]
        count = max(appointments // PATIENTS_PER_APPOINTMENT, SOUGHT + 1)
        patients: list[int] = []
        for chunk in range(0, count, 5000):
            rows = [bench_patient(i) for i in range(chunk, min(chunk + 5000, count))]
            patients.extend((await session.scalars(insert(Patient).returning(Patient.id), rows)).all())
        await name_words.sync(session, patients)

        def row(i: int) -> dict[str, Any]:
            patient = demo.patients["patient1"]
            if i < IN_WEEK:
                start = WEEK_START + timedelta(hours=8, minutes=30 * i)
            else:
                start = NOW - timedelta(minutes=30 * (i - IN_WEEK + 1))
                patient = patients[(i - IN_WEEK) % len(patients)]
            status = Status.COMPLETED if start < NOW else Status.APPROVED
            return appointment_row(
                patient_id=patient, doctor_id=doctors[i % len(doctors)], location_id=demo.locations["berlin"],
                start=start, status=status, now=min(start, NOW),
            )  # fmt: skip

        for chunk in range(0, appointments, 5000):
            rows = [row(i) for i in range(chunk, min(chunk + 5000, appointments))]
            await session.execute(insert(Appointment), rows)
        first = await session.scalar(select(func.min(Appointment.id)).where(Appointment.start_at >= WEEK_START))
        doctor_name = await session.scalar(select(User.display_name).where(User.id == demo.users["doctor1"]))
    if engine.dialect.name == "postgresql":  # autovacuum's analyze, after a load this size; SQLite has none
        async with engine.begin() as conn:
            await conn.execute(text("ANALYZE"))
    await engine.dispose()
    return {
        **demo.users,
        "location:berlin": demo.locations["berlin"],
        "patient1": demo.patients["patient1"],
        "week:first": int(first or 0),
        "doctor1:family": fhir_names.parts(str(doctor_name))[0],
    }


async def _measure(cases: list[Case], users: list[dict[str, Any]], tmp: Path) -> None:
    async with AsyncExitStack() as stack:
        clients = []
        for case, ids in zip(cases, users, strict=True):
            client, headers = await signed_in_client(stack, case.url, tmp, NOW)
            page = await client.put("/profile/appointments", headers=headers)
            clients.append((case, client, headers, page.json()["state"], searches(ids)))
        for i in range(REQUESTS + WARMUP):
            for case, client, headers, state, urls in clients:
                for name, url in urls.items():
                    t0 = time.perf_counter()
                    found = await client.get(url, headers=headers)
                    if found.status_code != 200:
                        raise SystemExit(f"{case.appointments} {name}: unexpected {found.text[:300]}")
                    if i >= WARMUP:
                        case.search_ms[name].append((time.perf_counter() - t0) * 1000)
                        body = found.json()
                        case.found[name] = body.get("total", len(body.get("entry", [])))
                t1 = time.perf_counter()
                poll = await client.patch("/profile/appointments", headers={**headers, "X-Screen-State": state})
                t2 = time.perf_counter()
                if poll.status_code != 200 or poll.json()["patches"]:
                    raise SystemExit(f"{case.appointments}: unexpected {poll.text[:300]}")
                if i >= WARMUP:
                    case.poll_ms.append((t2 - t1) * 1000)


async def _suite(_label: str, urls: list[str], tmp: Path) -> list[Case]:
    cases = [Case(url, n) for url, n in zip(urls, SIZES, strict=True)]
    users = [await _prepare(case.url, case.appointments) for case in cases]
    await _measure(cases, users, tmp)
    return cases


def _report(name: str, cases: list[Case]) -> bool:
    sqlite = name == "SQLite"
    print(f"\n{name}: FHIR searches, one doctor, one week ({REQUESTS} requests per case)")
    rows = [
        (search, f"{c.appointments:,}", percentile(c.search_ms[search], 50), percentile(c.search_ms[search], 99),
         c.found.get(search, 0))
        for search in SEARCHES
        for c in cases
    ]  # fmt: skip
    print(table(["search", "appointments", "p50 ms", "p99 ms", "found"], rows))
    small, large = cases[0], cases[-1]
    ok = True
    for search in SEARCHES:
        p50 = percentile(large.search_ms[search], 50)
        ratio = p50 / percentile(small.search_ms[search], 50)
        met = ratio <= 1.5 and (p50 <= 10 or not sqlite or search != "Appointment")
        ok = ok and met
        print(
            f"{search}: p50 {large.appointments:,} / {small.appointments:,} = {ratio:.2f} (target ≤ 1.5); "
            f"vs the unchanged poll: {p50 / percentile(large.poll_ms, 50):.1f}×: {'met' if met else 'MISSED'}"
        )
    return ok


def main() -> int:
    """Run the benchmark and print the tables; exit status 1 when a target is missed."""
    return reported(on_each_database("fhir", SIZES, _suite), _report)


if __name__ == "__main__":
    sys.exit(main())
