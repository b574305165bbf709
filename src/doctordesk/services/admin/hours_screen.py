"""The work-hours administration screen (``screens/admin/hours.py``): its page for a doctor and location, and its
actions through ``admin_hours`` (the JSON API's service: same rules, same audit, same conflict check). A change
that would leave approved appointments outside the hours comes back unapplied with those appointments listed and
an "Apply anyway" that sends the same form again with ``confirm``."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, time

from doctordesk.domain import moments
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.inputs import parse_id, parse_int, text_problem
from doctordesk.domain.roles import Actor
from doctordesk.domain.scheduling.suggestions import Hours, HoursException
from doctordesk.domain.texts import N_, Text
from doctordesk.i18n import _
from doctordesk.i18n.formats import format_wall
from doctordesk.runtime import Runtime
from doctordesk.screens.admin import hours as screen
from doctordesk.screens.protocol import Action, Layout, Option, Page, UpdateSet, el, p_replace, p_update
from doctordesk.screens.viewing import Viewing
from doctordesk.services.admin import hours as admin_hours
from doctordesk.services.scheduling.clinic_facts import cached_clinic
from doctordesk.services.screen_base import changed, navigation, require_admin, told, viewing

MAX_LINES = admin_hours.MAX_BLOCKS


def _time(raw: str | None, name: str, fields: dict[str, str]) -> time | None:
    if not raw:
        return None
    read = moments.read_time(raw)
    if isinstance(read, str):
        fields[name] = read
        return None
    return read


def hours_page(
    rt: Runtime,
    actor: Actor,
    *,
    doctor_id: int | None,
    location_id: int | None,
    layout: Layout,
    client_id: str | None,
) -> Viewing:
    """The doctor's weekly hours at the location and their exceptions; an unknown or missing doctor or location
    is settled to the first one."""

    async def render() -> Page:
        async with rt.db.read() as session:
            c = await cached_clinic(rt, session)
        doctors = list(c.directory.doctors)
        places = list(c.location_names)
        doctor = doctor_id if doctor_id in c.directory.doctors else (doctors[0] if doctors else None)
        location = location_id if location_id in c.location_names else (places[0] if places else None)
        rules: list[Hours] = []
        rows: list[screen.ExceptionRow] = []
        if doctor is not None:
            data = await admin_hours.get_hours(rt, doctor)
            for block in data["weekly"]:
                if block["location_id"] == location:
                    rules = [
                        Hours(r["weekday"], time.fromisoformat(r["opens"]), time.fromisoformat(r["closes"]))
                        for r in block["rules"]
                    ]
            rows = [
                screen.ExceptionRow(
                    e["id"],
                    e["day"],
                    e["kind"],
                    c.location_names.get(e["location_id"], "?") if e["location_id"] else _("Every location"),
                    e["opens"],
                    e["closes"],
                    e["note"] or "",
                )  # fmt: skip
                for e in data["exceptions"]
            ]
        return screen.render(
            screen.HoursScreen(
                doctor_id=doctor,
                location_id=location,
                doctors=[Option(str(d), c.directory.doctors[d]) for d in doctors],
                locations=[Option(str(loc), c.location_names[loc]) for loc in places],
                rules=rules,
                exceptions=rows,
                layout=layout,
                timeout=rt.settings.poll_list_seconds,
            )
        )

    where = screen.endpoint(doctor_id, location_id)
    return viewing(rt, actor, screen_name=screen.SCREEN, endpoint=where, render=render, client_id=client_id)


def choose(rt: Runtime, actor: Actor, form: Mapping[str, str]) -> UpdateSet:
    """Another doctor or location: the screen for it, as a navigation."""
    require_admin(actor)
    where = screen.endpoint(parse_id(form.get("doctor")), parse_id(form.get("location")))
    return navigation(rt, screen.SCREEN, where)


def _ids(form: Mapping[str, str]) -> tuple[int, int | None]:
    doctor = parse_id(form.get("doctor"))
    if doctor is None:
        raise ValidationFailed(fields={"doctor": N_("Choose a doctor.")})
    return doctor, parse_id(form.get("location"))


def _blocks(form: Mapping[str, str]) -> tuple[list[Hours], list[int]]:
    """The lines with a day as blocks; a line without a day is dropped, but a time on it must still be a time."""
    fields: dict[str, str] = {}
    blocks: list[Hours] = []
    lines: list[int] = []
    for i in range(1, MAX_LINES + 1):
        raw = form.get(f"weekday~{i}")
        opens = _time(form.get(f"opens~{i}"), f"opens~{i}", fields)
        closes = _time(form.get(f"closes~{i}"), f"closes~{i}", fields)
        if not raw:
            continue
        weekday = parse_int(raw, minimum=0, maximum=6)
        if weekday is None:
            fields[f"weekday~{i}"] = N_("Choose a day.")
        if opens is None and f"opens~{i}" not in fields:
            fields[f"opens~{i}"] = N_("Required.")
        if closes is None and f"closes~{i}" not in fields:
            fields[f"closes~{i}"] = N_("Required.")
        if weekday is not None and opens is not None and closes is not None:
            blocks.append(Hours(weekday, opens, closes))
            lines.append(i)
    if fields:
        raise ValidationFailed(fields=fields)
    return blocks, lines


def _on_lines(exc: ValidationFailed, lines: list[int]) -> ValidationFailed:
    """The service names blocks ``rules.{n}`` in list order: name the screen's lines instead."""
    named: dict[str, str] = {}
    for key, message in exc.fields.items():
        n = key.removeprefix("rules.")
        named[f"weekday~{lines[int(n)]}" if n.isdigit() and int(n) < len(lines) else key] = message
    return ValidationFailed(exc.message, fields=named)


def _conflicts(change: admin_hours.HoursChange, again: Action) -> UpdateSet:
    items = [
        el(
            f"conflict-{c.appointment_id}",
            "Regular",
            value=_("Appointment {id}: {when}", id=c.appointment_id, when=format_wall(datetime.fromisoformat(c.start))),
        )
        for c in change.conflicts
    ]
    n = len(change.conflicts)
    text = (
        _(
            "{count} approved appointments would be outside the new hours. Nothing was changed; the appointments "
            "are never moved. Apply anyway, or change the hours.",
            count=n,
        )
        if n > 1
        else _(
            "1 approved appointment would be outside the new hours. Nothing was changed; the appointment is never "
            "moved. Apply anyway, or change the hours."
        )
    )
    update = UpdateSet(screen=screen.SCREEN, state="", timeout=0)
    update.patches += [
        p_update("conflicts", visible=True),
        p_update("conflicts-text", value=text),
        p_replace(el("conflicts-list", "Group", *items).to_json()),
        p_update("confirm-change", action=again.to_json()),
    ]
    return update


async def _applied(
    rt: Runtime, page: Viewing, state: str | None, change: admin_hours.HoursChange, text: str
) -> UpdateSet:
    await changed(rt)
    update = await page.refresh(state)
    update.patches.append(p_update("conflicts", visible=False))
    if change.conflicts:
        text = Text(
            "{done} Approved appointments now outside the hours: {count}; they were not moved.",
            done=Text(text), count=len(change.conflicts),
        )  # fmt: skip
    return told(update, "saved", text)


def _unapplied(update: UpdateSet, state: str | None, rt: Runtime) -> UpdateSet:
    update.state, update.timeout = state or "", rt.settings.poll_list_seconds
    return update


async def save_weekly(
    rt: Runtime, actor: Actor, form: Mapping[str, str], *, confirm: bool, page: Viewing, state: str | None
) -> UpdateSet:
    require_admin(actor)
    doctor, location = _ids(form)
    if location is None:
        raise ValidationFailed(fields={"location": N_("Choose a location.")})
    blocks, lines = _blocks(form)
    try:
        change = await admin_hours.set_weekly(rt, actor, doctor, location, blocks, confirm=confirm)
    except ValidationFailed as exc:
        raise _on_lines(exc, lines) from None
    if not change.applied:
        again = Action("POST", f"{screen.ENDPOINT}/save?confirm=true", form="weekly")
        return _unapplied(_conflicts(change, again), state, rt)
    return await _applied(rt, page, state, change, N_("Weekly hours saved."))


async def add_exception(
    rt: Runtime, actor: Actor, form: Mapping[str, str], *, confirm: bool, page: Viewing, state: str | None
) -> UpdateSet:
    require_admin(actor)
    doctor, location = _ids(form)
    fields: dict[str, str] = {}
    if form.get("location") and location is None:
        # Empty means every location; anything else must name one (a typo is not "every location").
        fields["location"] = N_("Choose a location.")
    day = moments.form_day(form.get("day", ""), "day", fields, message=moments.FORM_DAY_MESSAGE)
    if day is None:
        fields.setdefault("day", moments.DAY_MESSAGE)
    opens, closes = _time(form.get("opens"), "opens", fields), _time(form.get("closes"), "closes", fields)
    note = form.get("note", "").strip()
    problem = text_problem(note, max_chars=255)
    if problem:
        fields["note"] = problem
    if fields:
        raise ValidationFailed(fields=fields)
    assert day is not None
    exception = HoursException(day, form.get("kind", ""), location, opens, closes)
    change = await admin_hours.add_exception(rt, actor, doctor, exception, note=note, confirm=confirm)
    if not change.applied:
        again = Action("POST", f"{screen.ENDPOINT}/exceptions/add?confirm=true", form="new-exception")
        return _unapplied(_conflicts(change, again), state, rt)
    update = await _applied(rt, page, state, change, N_("Exception added."))
    update.patches += [p_update(ref, value="") for ref in ("exc-day", "exc-opens", "exc-closes", "exc-note")]
    return update


async def remove_exception(
    rt: Runtime, actor: Actor, exception_id: int, *, confirm: bool, page: Viewing, state: str | None
) -> UpdateSet:
    require_admin(actor)
    change = await admin_hours.remove_exception(rt, actor, exception_id, confirm=confirm)
    if not change.applied:
        again = Action("POST", f"{screen.ENDPOINT}/exceptions/{exception_id}/remove?confirm=true")
        return _unapplied(_conflicts(change, again), state, rt)
    return await _applied(rt, page, state, change, N_("Exception removed."))
