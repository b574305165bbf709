"""The clinic's settings (docs/administration.md#clinic-settings): the JSON admin API (``/admin/clinic``) and the
administration screen (``/profile/admin/clinic``). Admins only."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter
from pydantic import Field, StrictBool

from doctordesk.domain import moments, reminders
from doctordesk.domain.roles import Actor, Role
from doctordesk.screens.viewing import Viewing
from doctordesk.services.clinic import screen as clinic_screen
from doctordesk.services.clinic import settings as clinic_settings
from doctordesk.web.bodies import StrictBody
from doctordesk.web.deps import SCREEN_HEADERS, FormDep, RuntimeDep, ScreenRequest, ScreenRequestDep, require_roles
from doctordesk.web.responses import FORBIDDEN, INVALID, SUBMIT_RESPONSES, TOO_LARGE, UNAUTHORIZED
from doctordesk.web.routers.admin import forms
from doctordesk.web.screen_routes import Route, screen_routes

router = APIRouter(tags=["administration"])

AdminDep = Annotated[Actor, require_roles(Role.ADMIN)]
READ: dict[int | str, dict[str, Any]] = {401: UNAUTHORIZED, 403: FORBIDDEN}
HH_MM = f"^$|{moments.TIME_PATTERN}"


class ClinicIn(StrictBody):
    """A change: settings not named keep their value."""

    reminders_enabled: Annotated[StrictBool | None, Field(description="Send reminders before appointments")] = None
    reminder_hours: Annotated[
        list[Annotated[int, Field(ge=1, le=reminders.MAX_HOURS)]] | None,
        Field(min_length=1, max_length=reminders.MAX_WINDOWS, description="Hours before the start, e.g. [24, 2]"),
    ] = None
    quiet_begin: Annotated[
        str | None, Field(max_length=5, pattern=HH_MM, description="Quiet hours from (HH:MM; empty: none)")
    ] = None
    quiet_end: Annotated[
        str | None, Field(max_length=5, pattern=HH_MM, description="Quiet hours until (HH:MM; empty: none)")
    ] = None
    waitlist_mode: Annotated[
        Literal["one-at-a-time", "all-at-once"] | None,
        Field(description="How a freed time is offered from the waitlist"),
    ] = None
    waitlist_offer_minutes: Annotated[
        int | None, Field(ge=1, le=1440, description="Minutes a one-at-a-time offer stays open")
    ] = None
    waitlist_direct_move: Annotated[
        StrictBool | None, Field(description="Accepting moves an approved appointment at once")
    ] = None


def as_json(values: dict[str, str]) -> dict[str, Any]:
    return {
        "reminders_enabled": values[clinic_settings.REMINDERS_ENABLED] == "true",
        "reminder_hours": list(reminders.parse_hours(values[clinic_settings.REMINDER_HOURS])),
        "quiet_begin": values[clinic_settings.QUIET_BEGIN],
        "quiet_end": values[clinic_settings.QUIET_END],
        "waitlist_mode": values[clinic_settings.WAITLIST_MODE],
        "waitlist_offer_minutes": int(values[clinic_settings.WAITLIST_OFFER_MINUTES]),
        "waitlist_direct_move": values[clinic_settings.WAITLIST_DIRECT_MOVE] == "true",
    }


@router.get("/admin/clinic", responses=READ)
async def read_clinic_settings(rt: RuntimeDep, _admin: AdminDep) -> dict[str, Any]:
    """The clinic's settings: reminders on or off, their hours before the start, quiet hours (local times in
    each location's zone; empty: none), and the waitlist's policy."""
    return as_json(await clinic_settings.read(rt))


@router.put("/admin/clinic", responses={**READ, 413: TOO_LARGE, 422: INVALID})
async def change_clinic_settings(rt: RuntimeDep, admin: AdminDep, body: ClinicIn) -> dict[str, Any]:
    """Change some of the clinic's settings (those not named keep theirs); audited. Quiet hours are both set or
    both empty."""
    changes: dict[str, str] = {}
    if body.reminders_enabled is not None:
        changes[clinic_settings.REMINDERS_ENABLED] = "true" if body.reminders_enabled else "false"
    if body.reminder_hours is not None:
        changes[clinic_settings.REMINDER_HOURS] = reminders.format_hours(body.reminder_hours)
    if body.quiet_begin is not None:
        changes[clinic_settings.QUIET_BEGIN] = body.quiet_begin
    if body.quiet_end is not None:
        changes[clinic_settings.QUIET_END] = body.quiet_end
    if body.waitlist_mode is not None:
        changes[clinic_settings.WAITLIST_MODE] = body.waitlist_mode
    if body.waitlist_offer_minutes is not None:
        changes[clinic_settings.WAITLIST_OFFER_MINUTES] = str(body.waitlist_offer_minutes)
    if body.waitlist_direct_move is not None:
        changes[clinic_settings.WAITLIST_DIRECT_MOVE] = "true" if body.waitlist_direct_move else "false"
    return as_json(await clinic_settings.update(rt, admin, changes))


def _screen(screen: ScreenRequest) -> Viewing:
    return screen.viewing(clinic_screen.clinic_settings)


screen_routes(
    router,
    "/profile/admin/clinic",
    _screen,
    page=Route("clinic_page", "The clinic's settings: reminders before appointments."),
    poll=Route("clinic_poll", "The clinic settings screen's poll."),
)


@router.post(
    "/profile/admin/clinic/save", responses=SUBMIT_RESPONSES, openapi_extra={**SCREEN_HEADERS, **forms.CLINIC_BODY}
)
async def save_clinic_settings(screen: ScreenRequestDep, form: FormDep) -> dict[str, Any]:
    """Save the clinic's settings (``reminders_enabled`` true or false, ``reminder_hours``, ``quiet_begin``,
    ``quiet_end``; ``waitlist_mode``, ``waitlist_offer_minutes``, ``waitlist_direct_move``)."""
    return await screen.submit(clinic_screen.save, form, page=_screen(screen))
