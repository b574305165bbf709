"""The administration screens for people and places (``screens/admin/users.py``, ``screens/admin/locations.py``):
their pages and polls, and their form actions, each calling the same administration service as the JSON API
(``admin_users``, ``admin_locations``), so the rules, the audit with before and after, token revocation and stream
closing are the same. Only admins; anyone else gets 404, as for a screen that is not theirs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.domain.errors import NotFound, ValidationFailed
from doctordesk.domain.inputs import check_text
from doctordesk.domain.roles import Actor, Role
from doctordesk.domain.scheduling.suggestions import is_timezone
from doctordesk.domain.texts import N_, Moment, Text
from doctordesk.i18n import _
from doctordesk.runtime import Runtime
from doctordesk.screens.admin import locations as locations_screen
from doctordesk.screens.admin import users as screen
from doctordesk.screens.protocol import Layout, Page, UpdateSet, p_update
from doctordesk.screens.viewing import Viewing
from doctordesk.services.accounts import password_links, staff_mail
from doctordesk.services.admin import locations as admin_locations
from doctordesk.services.admin import users as admin_users
from doctordesk.services.scheduling.clinic_facts import cached_clinic
from doctordesk.services.screen_base import (
    acted,
    changed,
    clinic_zone,
    form_flag,
    form_text,
    navigation,
    require_admin,
    viewing,
)

STAFF = tuple(r.value for r in staff_mail.STAFF_ROLES)  # their own mail's address is set on their page too


def _row(v: admin_users.UserView) -> screen.UserRow:
    d = v.doctor
    return screen.UserRow(
        v.id,
        v.username,
        v.display_name,
        v.role,
        v.active,
        specialty=d.specialty if d else None,
        timezone=d.timezone if d else None,
        can_prescribe=d.can_prescribe if d else None,
        chat_enabled=d.chat_enabled if d else None,
        email=v.email,
    )


# --- the user list ---------------------------------------------------------------------------------------------


def users_list(
    rt: Runtime, actor: Actor, *, role: Role | None, after: int | None, layout: Layout, client_id: str | None
) -> Viewing:
    async def render() -> Page:
        rows, next_after = await admin_users.list_users(
            rt, role=role, active=None, after_id=after, limit=screen.PAGE_SIZE
        )
        return screen.render_list(
            [_row(v) for v in rows],
            role=role.value if role else None,
            after=after,
            next_after=next_after,
            layout=layout,
            timeout=rt.settings.poll_list_seconds,
        )

    endpoint = screen.list_endpoint(role.value if role else None, after)
    return viewing(rt, actor, screen_name=screen.LIST_SCREEN, endpoint=endpoint, render=render, client_id=client_id)


def filter_users(rt: Runtime, actor: Actor, form: Mapping[str, str]) -> UpdateSet:
    """Another role chosen: the list for it, as a navigation."""
    require_admin(actor)
    role = form.get("role") or None
    if role is not None and role not in Role._value2member_map_:
        raise ValidationFailed(fields={"role": N_("One of: doctor, support, patient, admin.")})
    return navigation(rt, screen.LIST_SCREEN, screen.list_endpoint(role))


# --- a new user ------------------------------------------------------------------------------------------------


def new_user(rt: Runtime, actor: Actor, *, layout: Layout, client_id: str | None) -> Viewing:
    async def render() -> Page:
        return screen.render_new(layout=layout, timeout=rt.settings.poll_list_seconds)

    return viewing(rt, actor, screen_name=screen.NEW_SCREEN, endpoint=screen.NEW, render=render, client_id=client_id)


def _doctor_fields(form: Mapping[str, str], fields: dict[str, str]) -> admin_users.DoctorChange:
    """The doctor's fields of a user form, judged whatever the role (the form shows them to every role; they are
    used for doctors only), so that the form's rules are the same for everyone."""
    timezone = form_text(form, "timezone", max_chars=64, fields=fields)
    if timezone is not None and not is_timezone(timezone):
        fields["timezone"] = N_("An IANA time zone, e.g. Europe/Berlin.")
    return admin_users.DoctorChange(
        specialty=form_text(form, "specialty", max_chars=64, fields=fields),
        timezone=timezone,
        can_prescribe=form_flag(form, "can_prescribe", fields),
        chat_enabled=form_flag(form, "chat_enabled", fields),
    )


async def create_user(
    rt: Runtime, passwords: Passwords, actor: Actor, form: Mapping[str, str], *, state: str | None
) -> UpdateSet:
    """Create the user on the form; the answer goes to the new user's page with a notice naming who was created."""
    require_admin(actor)
    fields: dict[str, str] = {}
    role = form.get("role", "")
    if role not in Role._value2member_map_:
        fields["role"] = N_("One of: doctor, support, patient, admin.")
    username = form_text(form, "username", max_chars=64, fields=fields)
    name = form_text(form, "display_name", max_chars=128, fields=fields)
    password = form.get("password") or None
    if password is not None:
        # The free-text rule, as on the JSON API (its body refuses control characters in every text).
        check_text(fields, "password", password, max_chars=None)
    profile = _doctor_fields(form, fields)
    doctor = role == Role.DOCTOR.value
    _email_only_for_patients(form, role, fields)
    new = admin_users.NewUser(
        username=username or "",
        role=Role(role) if "role" not in fields else Role.PATIENT,
        display_name=name or "",
        password=password,
        specialty=profile.specialty if doctor else None,
        timezone=profile.timezone if doctor else None,
        can_prescribe=profile.can_prescribe if doctor else None,
        chat_enabled=profile.chat_enabled if doctor else None,
        email=(form.get("email") or None) if role == Role.PATIENT.value else None,
    )
    if username is None:
        fields["username"] = N_("Required.")
    if name is None:
        fields["display_name"] = N_("Required.")
    if fields:
        raise ValidationFailed(fields=fields)
    view, _generated = await admin_users.create_user(rt, passwords, actor, new)
    await changed(rt)
    role = Text(screen.ROLE_LABELS[view.role])
    # The answer lands on the new user's page, where the one-time link and Deactivate are. A generated password is
    # never shown there (a page is shown again, a notice goes by): the user sets their own through that link.
    text = (
        Text("Created {name} ({username}, {role}).", name=view.display_name, username=view.username, role=role)
        if password is not None
        else Text(
            "Created {name} ({username}, {role}). Make a one-time link here so they can set their password.",
            name=view.display_name, username=view.username, role=role,
        )
    )  # fmt: skip
    update = navigation(rt, screen.USER_SCREEN, screen.user_endpoint(view.id))
    update.state = state or ""
    update.notice = {"level": "info", "text": _(text)}
    return update


# --- one user --------------------------------------------------------------------------------------------------


def user_page(rt: Runtime, actor: Actor, user_id: int, *, layout: Layout, client_id: str | None) -> Viewing:
    async def render() -> Page:
        try:
            view = await admin_users.get_user(rt, user_id)
        except NotFound:
            raise NotFound(N_("User not found.")) from None
        staff = (await staff_mail.read(rt, user_id)).email if view.role in STAFF else None
        return screen.render_user(_row(view), layout=layout, timeout=rt.settings.poll_list_seconds, staff_email=staff)

    endpoint = screen.user_endpoint(user_id)
    return viewing(rt, actor, screen_name=screen.USER_SCREEN, endpoint=endpoint, render=render, client_id=client_id)


async def save_user(
    rt: Runtime, actor: Actor, user_id: int, form: Mapping[str, str], *, page: Viewing, state: str | None
) -> UpdateSet:
    """Save the profile form: the name (required), and for a doctor the profile fields."""
    require_admin(actor)
    fields: dict[str, str] = {}
    name = form_text(form, "display_name", max_chars=128, fields=fields)
    if name is None:
        fields["display_name"] = N_("Required.")
    profile = _doctor_fields(form, fields)
    user = await admin_users.get_user(rt, user_id)
    if user.role not in STAFF:
        _email_only_for_patients(form, user.role, fields)
    if fields:
        raise ValidationFailed(fields=fields)
    if user.role in STAFF and "email" in form:
        # First: a wrong address refuses the whole form, with nothing written. The choices stay the user's own.
        kept = await staff_mail.read(rt, user_id)
        await staff_mail.save(rt, actor, user_id, replace(kept, email=form.get("email")))
    if user.doctor is not None:
        await admin_users.update_doctor(rt, actor, user_id, replace(profile, display_name=name))
    else:
        if user.role == Role.PATIENT.value and "email" in form:
            # First: a wrong address refuses the whole form, with nothing written.
            await admin_users.update_patient(rt, actor, user_id, email=form.get("email"))
        await admin_users.rename_user(rt, actor, user_id, display_name=name or "")
    return await acted(rt, page, state, "saved", N_("Saved."))


async def set_active(
    rt: Runtime, actor: Actor, user_id: int, *, active: bool, page: Viewing, state: str | None
) -> UpdateSet:
    """Deactivate (signed out everywhere, streams closed) or reactivate."""
    require_admin(actor)
    if user_id == actor.user_id and not active:
        raise ValidationFailed(N_("You cannot deactivate yourself."))
    view = await admin_users.set_active(rt, actor, user_id, active=active)
    text = (
        Text("{name} is active again.", name=view.display_name)
        if active
        else Text("{name} is deactivated and signed out everywhere.", name=view.display_name)
    )
    return await acted(rt, page, state, "saved", text)


async def reset_password(
    rt: Runtime, passwords: Passwords, actor: Actor, user_id: int, *, page: Viewing, state: str | None
) -> UpdateSet:
    """A generated password, shown on the answer only (never stored readable, never on a later page)."""
    require_admin(actor)
    generated = await admin_users.set_password(rt, passwords, actor, user_id, password=None)
    text = Text("New password: {generated} — shown this once. The user was signed out everywhere.", generated=generated)
    return await acted(rt, page, state, "new-password", text)


async def password_link(
    rt: Runtime, actor: Actor, user_id: int, base_url: str, *, page: Viewing, state: str | None
) -> UpdateSet:
    """A one-time link through which the user sets their own password, shown on the answer only."""
    require_admin(actor)
    link = await password_links.create_link(rt, actor, user_id)
    async with rt.db.read() as session:
        zone = clinic_zone((await cached_clinic(rt, session)).directory.locations)
    url = link.url(base_url)
    text = Text(
        "One-time link: {url} — shown this once; it works once, until {until}. Earlier links for this user no "
        "longer work.",
        url=url, until=Moment(link.expires_at, zone),
    )  # fmt: skip
    update = await acted(rt, page, state, "new-password", text)
    # A Copy control for the link, on this answer only (like the link itself: never on a page).
    update.patches.append(p_update("copy-link", visible=True, props={"copy": url}))
    return update


# --- locations -------------------------------------------------------------------------------------------------


def locations(rt: Runtime, actor: Actor, *, layout: Layout, client_id: str | None) -> Viewing:
    async def render() -> Page:
        rows = await admin_locations.list_locations(rt)
        return locations_screen.render(rows, layout=layout, timeout=rt.settings.poll_list_seconds)

    return viewing(
        rt, actor, screen_name=locations_screen.SCREEN, endpoint=locations_screen.ENDPOINT, render=render,
        client_id=client_id,
    )  # fmt: skip


def _location_change(form: Mapping[str, str]) -> admin_locations.LocationChange:
    fields: dict[str, str] = {}
    change = admin_locations.LocationChange(
        name=form_text(form, "name", max_chars=128, fields=fields),
        address=form_text(form, "address", max_chars=255, fields=fields),
        timezone=form_text(form, "timezone", max_chars=64, fields=fields),
    )
    if fields:
        raise ValidationFailed(fields=fields)
    return change


async def save_location(
    rt: Runtime, actor: Actor, location_id: int | None, form: Mapping[str, str], *, page: Viewing, state: str | None
) -> UpdateSet:
    """Create a location (``location_id`` None) or save one."""
    require_admin(actor)
    change = _location_change(form)
    saved: Any
    if location_id is None:
        saved = await admin_locations.create_location(rt, actor, change)
        text = Text("Created {name}.", name=saved.name)
    else:
        saved = await admin_locations.update_location(rt, actor, location_id, change)
        text = Text("Saved {name}.", name=saved.name)
    update = await acted(rt, page, state, "saved", text)
    if location_id is None:
        update.patches += [p_update(ref, value="") for ref in ("new-name", "new-address", "new-timezone")]
    return update


def _email_only_for_patients(form: Mapping[str, str], role: str | None, fields: dict[str, str]) -> None:
    """An email address is a patient's (docs/notifications.md), or on their page a doctor's or support member's
    own (docs/notifications.md#staff-mail): given for another role it is refused, as the JSON API refuses it,
    rather than dropped unseen."""
    if role != Role.PATIENT.value and form.get("email", "").strip():
        fields["email"] = N_("Only for patients.")
