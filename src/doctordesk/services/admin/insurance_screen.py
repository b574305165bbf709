"""The insurance administration screen (``screens/admin/insurance.py``): its page for one patient and its actions
through ``admin_policies`` (the JSON API's service: same checks, same audit with before and after). The form's
ticked doctors and locations replace the policy's lists whole."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date

from sqlalchemy import select

from doctordesk.domain import moments
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.inputs import check_text, parse_id
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_, Text
from doctordesk.i18n import _
from doctordesk.runtime import Runtime
from doctordesk.screens.admin import insurance as screen
from doctordesk.screens.protocol import Layout, Option, Page, UpdateSet, p_update
from doctordesk.screens.viewing import Viewing
from doctordesk.services.admin import policies as admin_policies
from doctordesk.services.scheduling.clinic_facts import cached_clinic
from doctordesk.services.screen_base import acted, form_flag, form_text, navigation, require_admin, viewing
from doctordesk.store.tables import Patient


def insurance_page(
    rt: Runtime, actor: Actor, *, patient_id: int | None, layout: Layout, client_id: str | None
) -> Viewing:
    """A patient's policies (an unknown or missing patient: the first one)."""

    async def render() -> Page:
        async with rt.db.read() as session:
            c = await cached_clinic(rt, session)
            patients = (
                await session.execute(select(Patient.id, Patient.name).order_by(Patient.name, Patient.id).limit(
                    screen.MAX_PATIENTS))
            ).all()  # fmt: skip
            chosen = patient_id
            if chosen is None or await session.get(Patient, chosen) is None:
                chosen = patients[0].id if patients else None
        policies = await admin_policies.list_policies(rt, chosen) if chosen is not None else []
        options = [Option(str(p.id), p.name) for p in patients]
        if chosen is not None and str(chosen) not in {o.value for o in options}:
            options.append(Option(str(chosen), _("Patient #{id}", id=chosen)))
        return screen.render(
            patient_id=chosen, patients=options, insurers=await admin_policies.list_insurers(rt), policies=policies,
            doctors=c.directory.doctors, locations=c.location_names, layout=layout,
            timeout=rt.settings.poll_list_seconds,
        )  # fmt: skip

    where = screen.endpoint(patient_id)
    return viewing(rt, actor, screen_name=screen.SCREEN, endpoint=where, render=render, client_id=client_id)


def choose(rt: Runtime, actor: Actor, form: Mapping[str, str]) -> UpdateSet:
    """Another patient: the screen for them, as a navigation."""
    require_admin(actor)
    where = screen.endpoint(parse_id(form.get("patient")))
    return navigation(rt, screen.SCREEN, where)


def _day(form: Mapping[str, str], name: str, fields: dict[str, str]) -> date | None:
    return moments.form_day(form.get(name), name, fields, message=moments.FORM_DAY_MESSAGE)


def _ticked(form: Mapping[str, str], field: str, fields: dict[str, str]) -> list[int]:
    """The ids whose ``field~<id>`` box is ticked."""
    ids: list[int] = []
    for name in form:
        if name.startswith(f"{field}~"):
            ident = parse_id(name.split("~", 1)[1])
            ticked = form_flag(form, name, fields)
            if ident is None:
                fields[name] = N_("Unknown id.")
            elif ticked:
                ids.append(ident)
    return ids


def policy_from_form(form: Mapping[str, str]) -> admin_policies.PolicyInput:
    fields: dict[str, str] = {}
    insurer = form_text(form, "insurer", max_chars=128, fields=fields)
    number = form_text(form, "policy_number", max_chars=64, fields=fields)
    services_raw = form_text(form, "excluded_services", max_chars=2000, fields=fields)
    record = form.get("third_party_data")
    if record:
        # The free-text rule, as on the JSON API: line breaks and tabs kept, other control characters refused.
        check_text(fields, "third_party_data", record, max_chars=None, multiline=True)
    data = admin_policies.PolicyInput(
        insurer=insurer,
        policy_number=number,
        valid_from=_day(form, "valid_from", fields),
        valid_to=_day(form, "valid_to", fields),
        network_doctors=_ticked(form, "network_doctor", fields),
        network_locations=_ticked(form, "network_location", fields),
        excluded_services=[s.strip() for s in (services_raw or "").split(",") if s.strip()],
        excluded_doctors=_ticked(form, "excluded_doctor", fields),
        third_party_data=record if record else None,
        clear_third_party_data=record == "",
    )
    if fields:
        raise ValidationFailed(fields=fields)
    return data


async def create_policy(
    rt: Runtime, actor: Actor, form: Mapping[str, str], *, page: Viewing, state: str | None
) -> UpdateSet:
    require_admin(actor)
    patient = parse_id(form.get("patient"))
    if patient is None:
        raise ValidationFailed(fields={"patient": N_("Choose a patient.")})
    saved = await admin_policies.create_policy(rt, actor, patient, policy_from_form(form))
    text = Text("Added {insurer} {number}.", insurer=saved["insurer"], number=saved["policy_number"])
    update = await acted(rt, page, state, "saved", text)
    refs = ("new-insurer", "new-number", "new-from", "new-to", "new-excluded-services", "new-record")
    update.patches += [p_update(ref, value="") for ref in refs]
    return update


async def save_policy(
    rt: Runtime, actor: Actor, policy_id: int, form: Mapping[str, str], *, page: Viewing, state: str | None
) -> UpdateSet:
    require_admin(actor)
    if form.get("patient") and parse_id(form.get("patient")) is None:
        raise ValidationFailed(fields={"patient": "Choose a patient."})
    saved = await admin_policies.update_policy(rt, actor, policy_id, policy_from_form(form))
    text = Text("Saved {insurer} {number}.", insurer=saved["insurer"], number=saved["policy_number"])
    return await acted(rt, page, state, "saved", text)
