"""The dashboard screens (docs/dashboard.md): the admin's (the whole clinic, or one doctor through the filter) and a
doctor's own, their doctor filter as a navigation, and each metric's CSV.

Figures are computed at most once per scope every ``HOLD_SECONDS`` (every admin and every poll share them): a
busy clinic's changes come faster than anyone reads a chart, and each change sends every open dashboard to poll.
A page drawn from figures older than a change says so in its token (``lasting``), so its next poll after the hold
draws fresh ones."""

from __future__ import annotations

import io
from collections.abc import Mapping
from datetime import datetime, timedelta
from decimal import Decimal

from doctordesk.domain.dashboard.figures import Figure
from doctordesk.domain.dashboard.metric import Metric, Scope
from doctordesk.domain.dashboard.window import Window, window_at
from doctordesk.domain.errors import NotFound
from doctordesk.domain.events import ALL_APPOINTMENTS_TOPIC, CLINIC_TOPIC, doctor_topic
from doctordesk.domain.inputs import parse_id
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.texts import N_
from doctordesk.domain.transfer.csv_cells import CsvWriter
from doctordesk.i18n import _
from doctordesk.runtime import Runtime
from doctordesk.screens import dashboard as screen
from doctordesk.screens.protocol import Layout, Option, Page, UpdateSet
from doctordesk.screens.state import Shown, Viewer, lasting
from doctordesk.screens.viewing import Viewing
from doctordesk.services.dashboard import registry
from doctordesk.services.scheduling.clinic_facts import Clinic, cached_clinic
from doctordesk.services.scheduling.options_screen import doctor_options
from doctordesk.services.screen_base import clinic_zone, navigation, require_admin
from doctordesk.services.waitlist.entries import waitlist_topic

HOLD_SECONDS = 10
CACHE = "dashboard.figures"
Figures = list[tuple[Metric, Figure]]


def topics(doctor_id: int | None) -> tuple[str, ...]:
    """What the figures are made of: the appointments (every one, or the doctor's), the clinic's reference data
    (doctors' names, hours, exceptions, the locations' zones) and the waitlist (a freed time found and offered
    counts when it is offered, before anything happens to an appointment)."""
    appointments = doctor_topic(doctor_id) if doctor_id is not None else ALL_APPOINTMENTS_TOPIC
    return (appointments, CLINIC_TOPIC, waitlist_topic())


def _scope(rt: Runtime, c: Clinic, window: Window, doctor_id: int | None) -> Scope:
    doctors = dict(c.directory.doctors) if doctor_id is None else {doctor_id: c.directory.doctors[doctor_id]}
    return Scope(
        window=window,
        doctor_id=doctor_id,
        doctors=doctors,
        work_hours=c.work_hours,
        exceptions=c.hours_exceptions,
        cancel_hours=rt.settings.patient_cancel_hours,
    )


async def figures(rt: Runtime, doctor_id: int | None) -> tuple[Window, Figures, datetime | None]:
    """Every metric's figure for the scope, the window, and when a fresher one may be drawn (None: these are
    current). 404 for a doctor filter naming no active doctor."""
    now = rt.clock.now()
    stamp = rt.screens.revisions.stamp(topics(doctor_id))  # read first: a change while computing is not lost
    async with rt.db.read() as session:
        c = await cached_clinic(rt, session)
        if doctor_id is not None and doctor_id not in c.directory.doctors:
            raise NotFound(N_("Screen not found."))
        window = window_at(now, clinic_zone(c.directory.locations))
        cache: dict[tuple[int | None, str], tuple[datetime, int, Window, Figures]] = rt.caches.setdefault(CACHE, {})
        key = (doctor_id, window.zone)
        entry = cache.get(key)
        if entry is not None and entry[2].today == window.today and timedelta(0) <= now - entry[0] < _hold():
            at, mark, kept_window, kept = entry
            return kept_window, kept, (at + _hold() if mark != stamp else None)
        scope = _scope(rt, c, window, doctor_id)
        computed = [(m, await m.compute(session, scope)) for m in registry.METRICS]
    for old in [k for k, v in cache.items() if v[2].today != window.today]:
        del cache[old]
    cache[key] = (now, stamp, window, computed)
    return window, computed, None


def _hold() -> timedelta:
    return timedelta(seconds=HOLD_SECONDS)


def _options(c: Clinic) -> list[Option]:
    return doctor_options(c)


def admin_page(rt: Runtime, actor: Actor, doctor_id: int | None, *, layout: Layout, client_id: str | None) -> Viewing:
    """The admin's dashboard: the whole clinic, or ``doctor_id``'s figures. Admins only (anyone else: 404)."""
    require_admin(actor)

    async def render() -> Page:
        window, computed, fresher = await figures(rt, doctor_id)
        async with rt.db.read() as session:
            doctors = _options(await cached_clinic(rt, session))
        board = screen.Board(window, computed, doctor_id=doctor_id, doctors=doctors, admin=True)
        page = screen.render(board, layout=layout, timeout=rt.settings.poll_list_seconds)
        return lasting(page, fresher) if fresher is not None else page

    endpoint = screen.ADMIN_ENDPOINT + (f"?doctor={doctor_id}" if doctor_id is not None else "")
    shown = Shown(screen.ADMIN_SCREEN, endpoint, topics(doctor_id), repeatable=True)
    viewer = Viewer.of(actor, client_id)
    return Viewing(rt.screens, rt.wall(), viewer, shown, rt.settings.poll_list_seconds, render)


def doctor_page(rt: Runtime, actor: Actor, *, layout: Layout, client_id: str | None) -> Viewing:
    """A doctor's own dashboard: their figures only. Doctors only (anyone else: 404)."""
    doctor_id = _own(actor)

    async def render() -> Page:
        window, computed, fresher = await figures(rt, doctor_id)
        board = screen.Board(window, computed, doctor_id=doctor_id, admin=False)
        page = screen.render(board, layout=layout, timeout=rt.settings.poll_list_seconds)
        return lasting(page, fresher) if fresher is not None else page

    shown = Shown(screen.DOCTOR_SCREEN, screen.DOCTOR_ENDPOINT, topics(doctor_id), repeatable=True)
    viewer = Viewer.of(actor, client_id)
    return Viewing(rt.screens, rt.wall(), viewer, shown, rt.settings.poll_list_seconds, render)


def _own(actor: Actor) -> int:
    if actor.role is not Role.DOCTOR:
        raise NotFound(N_("Screen not found."))
    return actor.user_id


def choose(rt: Runtime, actor: Actor, form: Mapping[str, str]) -> UpdateSet:
    """Another doctor (``doctor``; empty: the whole clinic): that dashboard, as a navigation."""
    require_admin(actor)
    doctor = parse_id(form.get("doctor"))
    where = screen.ADMIN_ENDPOINT + (f"?doctor={doctor}" if doctor is not None else "")
    return navigation(rt, screen.ADMIN_SCREEN, where)


async def export(rt: Runtime, actor: Actor, key: str, *, doctor_id: int | None, admin: bool) -> tuple[str, bytes]:
    """A metric's figure as CSV (the file name and its bytes): the admin's scope or the doctor's own. Header in
    the reader's language, days as ``YYYY-MM-DD``, numbers with a dot, names neutralised against formulas."""
    if admin:
        require_admin(actor)
    else:
        doctor_id = _own(actor)
    metric = next((m for m in registry.METRICS if m.key == key), None)
    if metric is None:
        raise NotFound(N_("Screen not found."))
    window, computed, _fresher = await figures(rt, doctor_id)
    figure = next(f for m, f in computed if m.key == key)
    out = io.StringIO()
    writer = CsvWriter(out)
    writer.row([screen.first_header(figure), *(_(c.label) for c in figure.columns)])
    for r in figure.rows:
        writer.row([r.key if isinstance(r.key, str) else r.key.isoformat(), *(_cell(v) for v in r.values)])
    return f"{key}-{window.today.isoformat()}.csv", out.getvalue().encode()


def _cell(value: float | int | None) -> int | Decimal | None:
    if value is None or isinstance(value, int):
        return value
    return Decimal(str(value))
