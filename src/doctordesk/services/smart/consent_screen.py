"""The consent screen of a SMART launch (``screens/smart/consent.py``): its page and poll, and the user's answer,
which sends the browser back to the app (``UpdateSet.leave``). Any signed-in user may answer a launch: the grant
is theirs and their own rights stay beneath it (docs/smart.md#consent)."""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import select

from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.inputs import parse_id
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_
from doctordesk.runtime import Runtime
from doctordesk.screens.protocol import Layout, Page, UpdateSet
from doctordesk.screens.smart import consent as screen
from doctordesk.screens.state import Shown, Viewer
from doctordesk.screens.viewing import Viewing
from doctordesk.services.appointments.reading import patients_visible_to
from doctordesk.services.smart import authorize
from doctordesk.store.tables import Patient

MAX_PATIENTS = 200  # the picker lists the first ones by name (docs/smart.md#consent)


async def _patients(rt: Runtime, actor: Actor) -> list[tuple[int, str]]:
    """The patients ``actor`` may launch for: those they may see at the FHIR interface."""
    query = patients_visible_to(select(Patient.id, Patient.name), actor).order_by(Patient.name, Patient.id)
    async with rt.db.read() as session:
        return [(pid, name) for pid, name in (await session.execute(query.limit(MAX_PATIENTS))).all()]


def viewing(rt: Runtime, actor: Actor, ticket: str, *, layout: Layout, client_id: str | None) -> Viewing:
    timeout = rt.settings.poll_default_seconds

    async def render() -> Page:
        pending = await authorize.pending(rt, actor, ticket)
        patients = await _patients(rt, actor) if pending.pick_patient else None
        return screen.render(
            ticket, client_name=pending.client_name, scopes=pending.scopes, patients=patients, layout=layout,
            timeout=timeout,
        )  # fmt: skip

    shown = Shown(screen.SCREEN, screen.endpoint(ticket), ())
    return Viewing(rt.screens, rt.wall(), Viewer.of(actor, client_id), shown, timeout, render)


async def answer(rt: Runtime, actor: Actor, ticket: str, form: Mapping[str, str], *, allow: bool) -> UpdateSet:
    """Allow (with the picked ``patient`` for a staff launch) or deny; the answer leaves for the app."""
    picked: int | None = None
    raw = form.get("patient", "")
    if allow and raw:
        picked = parse_id(raw)
        if picked is None:
            raise ValidationFailed(fields={"patient": N_("Choose a patient.")})
    visible: set[int] = set()
    if allow and picked is not None:
        visible = {pid for pid, _name in await _patients(rt, actor) if pid == picked}
    target = await authorize.decide(rt, actor, ticket, allow=allow, patient=picked, visible=visible)
    return UpdateSet(screen=screen.SCREEN, state="", timeout=rt.settings.poll_default_seconds, leave=target)
