"""The security page (``screens/security.py``) for any signed-in user: its viewing, on the user's own topic (a
change in another tab or by an admin's reset shows at the next poll or real-time update), and its actions, each
through the account services (``security.page``, ``mfa``) that keep the rules and the audit. The routes ask for a
recent authentication first (web/routers/security.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict

from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.events import user_topic
from doctordesk.domain.inputs import text_problem
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_, Text
from doctordesk.i18n import _
from doctordesk.runtime import Runtime
from doctordesk.screens import security as screen
from doctordesk.screens import security_mail as mail_screen
from doctordesk.screens.protocol import Layout, Page, UpdateSet, p_replace, p_update
from doctordesk.screens.state import Shown, Viewer
from doctordesk.screens.viewing import Viewing
from doctordesk.services.accounts import mfa, own_access, passkeys, recovery, staff_mail
from doctordesk.services.scheduling.clinic_facts import cached_clinic
from doctordesk.services.security import page as security_page

CHANGED = N_("Your password was changed. Ended elsewhere: sessions {sessions}, app tokens {apps}, phones {phones}.")
SIGNED_OUT = N_("You were signed out everywhere else. Ended: sessions {sessions}, app tokens {apps}, phones {phones}.")


async def _zone(rt: Runtime) -> str:
    """The zone the page shows times in: the clinic's (its first location's), UTC without one."""
    async with rt.db.read() as session:
        locations = (await cached_clinic(rt, session)).directory.locations
    return locations[min(locations)] if locations else "UTC"


def page(rt: Runtime, actor: Actor, *, layout: Layout, client_id: str | None) -> Viewing:
    timeout = rt.settings.poll_default_seconds

    async def render() -> Page:
        view = await security_page.overview(rt, actor)
        mail = await staff_mail.read(rt, actor.user_id) if actor.role in staff_mail.STAFF_ROLES else None
        extra = () if mail is None else (mail_screen.section(**asdict(mail)),)
        return screen.render(view, zone=await _zone(rt), layout=layout, timeout=timeout, notifications=extra)

    # Sessions expire and set-ups age with time alone: ``repeatable`` is not claimed, so a poll renders again.
    shown = Shown(screen.SCREEN, screen.ENDPOINT, (user_topic(actor.user_id),))
    return Viewing(rt.screens, rt.wall(), Viewer.of(actor, client_id), shown, timeout, render)


async def _done(page: Viewing, state: str | None, text: str) -> UpdateSet:
    update = await page.refresh(state)
    update.patches.append(p_update("saved", value=_(text), visible=True))
    return update


async def end_session(rt: Runtime, actor: Actor, token_id: int, *, page: Viewing, state: str | None) -> UpdateSet:
    await security_page.end_session(rt, actor, token_id)
    return await _done(page, state, N_("The session was ended."))


async def remove_device(rt: Runtime, actor: Actor, device_id: int, *, page: Viewing, state: str | None) -> UpdateSet:
    await security_page.remove_device(rt, actor, device_id)
    return await _done(page, state, N_("That phone gets no more notifications."))


async def remove_passkey(rt: Runtime, actor: Actor, key_id: int, *, page: Viewing, state: str | None) -> UpdateSet:
    await security_page.remove_passkey(rt, actor, key_id)
    return await _done(page, state, N_("The passkey was removed."))


async def revoke_app(rt: Runtime, actor: Actor, client_pk: int, *, page: Viewing, state: str | None) -> UpdateSet:
    await security_page.revoke_app(rt, actor, client_pk)
    return await _done(page, state, N_("The app's access was revoked."))


async def totp_start(rt: Runtime, actor: Actor, *, page: Viewing, state: str | None) -> UpdateSet:
    await mfa.start_totp(rt, mfa.Enrolling(actor=actor))
    return await page.refresh(state)


async def totp_off(rt: Runtime, actor: Actor, *, page: Viewing, state: str | None) -> UpdateSet:
    await security_page.totp_off(rt, actor)
    return await _done(page, state, N_("The authenticator app is off."))


async def totp_confirm(
    rt: Runtime, actor: Actor, form: Mapping[str, str], *, page: Viewing, state: str | None
) -> UpdateSet:
    """Turn the app on with the code it shows; the recovery codes made with it are shown on this answer only."""
    code = form.get("code", "").strip()
    if not code:
        raise ValidationFailed(fields={"code": N_("Enter the code your app shows.")})
    codes = await mfa.confirm_totp(rt, mfa.Enrolling(actor=actor), code)
    return _with_codes(await _done(page, state, N_("The authenticator app is on.")), codes)


async def new_codes(rt: Runtime, actor: Actor, *, page: Viewing, state: str | None) -> UpdateSet:
    codes = await mfa.new_recovery_codes(rt, actor)
    return _with_codes(await _done(page, state, N_("New recovery codes made: the old ones no longer work.")), codes)


def _with_codes(update: UpdateSet, codes: list[str]) -> UpdateSet:
    if codes:
        update.patches.append(p_replace(screen.codes_element(codes).to_json()))
    return update


async def change_password(
    rt: Runtime,
    actor: Actor,
    passwords: Passwords,
    form: Mapping[str, str],
    *,
    client_host: str | None,
    page: Viewing,
    state: str | None,
) -> UpdateSet:
    """Change one's password (the current one checked like a sign-in); the other ways in end, this session stays.
    The three fields are emptied on success."""
    change = own_access.NewPassword(
        form.get("password", ""), form.get("new_password", ""), form.get("new_password_again", "")
    )
    ended = await own_access.change_password(rt, passwords, actor, change, client_host=client_host)
    update = await _done(page, state, _ended(CHANGED, ended))
    for ref in ("password-current", "password-new", "password-again"):
        update.patches.append(p_update(ref, value=""))
    return update


async def sign_out_elsewhere(rt: Runtime, actor: Actor, *, page: Viewing, state: str | None) -> UpdateSet:
    ended = await own_access.sign_out_elsewhere(rt, actor)
    return await _done(page, state, _ended(SIGNED_OUT, ended))


def _ended(done: str, ended: recovery.Ended) -> Text:
    """``done`` (a text with ``{sessions}``, ``{apps}``, ``{phones}``) filled with how many ways in ended."""
    return Text(done, sessions=len(ended.token_ids), apps=ended.app_tokens, phones=ended.devices)


async def add_passkey(
    rt: Runtime,
    actor: Actor,
    rp: passkeys.RelyingParty,
    form: Mapping[str, str],
    *,
    page: Viewing,
    state: str | None,
) -> UpdateSet:
    """Keep the passkey the browser just created (``ticket`` from /auth/passkeys/options, ``credential`` the
    object its ``toJSON()`` gives, as JSON text) under the name given, "Passkey" without one; when it is the first
    factor, the recovery codes made with it are shown on this answer only."""
    ticket = form.get("ticket", "")
    if not ticket:
        raise ValidationFailed(fields={"ticket": N_("The request expired. Try again.")})
    _key, codes = await passkeys.register(
        rt, mfa.Enrolling(actor=actor), rp, ticket=ticket, credential=form.get("credential", ""),
        name=form.get("name", ""),
    )  # fmt: skip
    update = _with_codes(await _done(page, state, N_("The passkey was added.")), codes)
    update.patches.append(p_update("passkey-name", value=""))
    return update


async def save_mail(
    rt: Runtime, actor: Actor, form: Mapping[str, str], *, page: Viewing, state: str | None
) -> UpdateSet:
    """Save one's own mail: the address (empty: none) and the kinds ticked; every field's problem at once."""
    fields: dict[str, str] = {}
    email = form.get("email", "")
    problem = text_problem(email, max_chars=mail_screen.MAX_ADDRESS)
    if problem:
        fields["email"] = problem
    flags = {name: form.get(name, "false") for name in ("new_request", "canceled_by_patient")}
    fields |= {name: N_("true or false.") for name, v in flags.items() if v not in ("true", "false")}
    if fields:
        raise ValidationFailed(fields=fields)
    wanted = staff_mail.StaffMail(email, flags["new_request"] == "true", flags["canceled_by_patient"] == "true")
    await staff_mail.save(rt, actor, actor.user_id, wanted)
    return await _done(page, state, N_("Your notifications were saved."))
