"""The administration screen for work hours: a doctor's weekly hours at one location (one line per block, a few
empty lines to add more) and their dated exceptions (holidays, absences, extra days). A change that would leave
approved appointments outside the hours is not applied: the screen lists those appointments and asks again."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from urllib.parse import urlencode

from doctordesk.domain.scheduling.suggestions import ExceptionKind, Hours
from doctordesk.i18n import N_, _
from doctordesk.i18n.day_entry import date_attrs
from doctordesk.i18n.formats import format_day
from doctordesk.screens.admin.pages import BASE, notice, page
from doctordesk.screens.protocol import Action, Element, Layout, Option, Page, el

SCREEN = "admin-hours"
ENDPOINT = f"{BASE}/hours"
EMPTY_LINES = 3
WEEKDAYS = (N_("Monday"), N_("Tuesday"), N_("Wednesday"), N_("Thursday"), N_("Friday"), N_("Saturday"), N_("Sunday"))
KINDS = (
    (ExceptionKind.HOLIDAY, N_("Holiday (no hours)")),
    (ExceptionKind.ABSENCE, N_("Absence (whole day, or from-to)")),
    (ExceptionKind.EXTRA, N_("Extra hours (from-to)")),
)
# An exception's kind in a listed line.
EXCEPTION_WORDS = {
    ExceptionKind.HOLIDAY: N_("holiday"),
    ExceptionKind.ABSENCE: N_("absence"),
    ExceptionKind.EXTRA: N_("extra hours"),
}


def endpoint(doctor_id: int | None, location_id: int | None) -> str:
    query = {k: str(v) for k, v in (("doctor", doctor_id), ("location", location_id)) if v is not None}
    return f"{ENDPOINT}?{urlencode(query)}" if query else ENDPOINT


@dataclass(frozen=True, slots=True)
class ExceptionRow:
    id: int
    day: str
    kind: str
    location: str  # a location's name, or "Every location"
    opens: str | None
    closes: str | None
    note: str


@dataclass(frozen=True, slots=True)
class HoursScreen:
    doctor_id: int | None
    location_id: int | None
    doctors: Sequence[Option]
    locations: Sequence[Option]
    rules: Sequence[Hours]
    exceptions: Sequence[ExceptionRow]
    layout: Layout
    timeout: int


def _rule_line(i: int, rule: Hours | None) -> Element:
    return el(
        f"rule-{i}",
        "Group",
        el(f"weekday~{i}", "Combo", label=_("Day"), name=f"weekday~{i}", value=str(rule.weekday) if rule else "",
           options=[Option("", "—"), *(Option(str(n), _(d)) for n, d in enumerate(WEEKDAYS))]),
        el(f"opens~{i}", "Time", label=_("From"), name=f"opens~{i}",
           value=rule.opens.strftime("%H:%M") if rule else ""),
        el(f"closes~{i}", "Time", label=_("To"), name=f"closes~{i}",
           value=rule.closes.strftime("%H:%M") if rule else ""),
    )  # fmt: skip


def _exception(row: ExceptionRow) -> Element:
    span = f", {row.opens}–{row.closes}" if row.opens and row.closes else ""
    kind = _(EXCEPTION_WORDS[row.kind]) if row.kind in EXCEPTION_WORDS else row.kind
    day = format_day(date.fromisoformat(row.day), with_year=True)
    return el(
        f"exception-{row.id}",
        "Row",
        el(f"exception-text-{row.id}", "Regular", value=f"{day}: {kind}{span} · {row.location}"),
        el(f"exception-note-{row.id}", "Caption", value=row.note or None),
        el(f"remove-exception-{row.id}", "Button", label=_("Remove"),
           action=Action("POST", f"{ENDPOINT}/exceptions/{row.id}/remove", confirm=_("Remove this exception?"))),
    )  # fmt: skip


def render(screen: HoursScreen) -> Page:
    where = endpoint(screen.doctor_id, screen.location_id)
    choice = el(
        "choice",
        "Section",
        el("doctor", "Combo", label=_("Doctor"), name="doctor", value=str(screen.doctor_id or ""),
           options=screen.doctors, action=Action("PATCH", f"{ENDPOINT}/choose", form="choice")),
        el("location", "Combo", label=_("Location"), name="location", value=str(screen.location_id or ""),
           options=screen.locations, action=Action("PATCH", f"{ENDPOINT}/choose", form="choice")),
        label=_("Whose hours, where"),
    )  # fmt: skip
    lines = [_rule_line(i, r) for i, r in enumerate(screen.rules, start=1)]
    lines += [_rule_line(i, None) for i in range(len(screen.rules) + 1, len(screen.rules) + 1 + EMPTY_LINES)]
    weekly = el(
        "weekly",
        "Section",
        el("rules-doctor", "Hidden", name="doctor", value=str(screen.doctor_id or "")),
        el("rules-location", "Hidden", name="location", value=str(screen.location_id or "")),
        el("weekly-hint", "Caption", value=_("Local time of the location. Leave a line's day empty to drop it.")),
        *lines,
        el("save-hours", "Button", label=_("Save weekly hours"),
           action=Action("POST", f"{ENDPOINT}/save", form="weekly")),
        label=_("Weekly hours"),
    )  # fmt: skip
    conflicts = el(
        "conflicts",
        "Section",
        el("conflicts-text", "Notice", props={"tone": "warning"}),
        el("conflicts-list", "Group"),
        el("confirm-change", "Button", label=_("Apply anyway")),
        label=_("Appointments outside the new hours"),
        visible=False,
    )
    add = el(
        "new-exception",
        "Section",
        el("exc-doctor", "Hidden", name="doctor", value=str(screen.doctor_id or "")),
        el("exc-day", "Date", label=_("Day"), name="day", **date_attrs()),
        el("exc-kind", "Combo", label=_("Kind"), name="kind", value=ExceptionKind.HOLIDAY,
           options=[Option(k, _(label)) for k, label in KINDS]),
        el("exc-location", "Combo", label=_("Where"), name="location", value="",
           options=[Option("", _("Every location")), *screen.locations]),
        el("exc-opens", "Time", label=_("From (optional)"), name="opens"),
        el("exc-closes", "Time", label=_("To (optional)"), name="closes"),
        el("exc-note", "Edit", label=_("Note"), name="note"),
        el("add-exception", "Button", label=_("Add exception"),
           action=Action("POST", f"{ENDPOINT}/exceptions/add", form="new-exception")),
        label=_("Add a holiday, absence or extra day"),
    )  # fmt: skip
    exceptions = el(
        "exceptions",
        "Section",
        el("exceptions-empty", "Caption", value=_("No exceptions."), visible=not screen.exceptions),
        *(_exception(r) for r in screen.exceptions),
        label=_("Dated exceptions"),
    )
    return page(
        screen=SCREEN, current="hours", title=_("Work hours"), endpoint=where,
        elements=[notice("saved"), choice, conflicts, weekly, exceptions, add],
        layout=screen.layout, timeout=screen.timeout,
    )  # fmt: skip
