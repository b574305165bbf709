"""The administration screens of the web app (docs/administration.md): users, locations, work hours and the audit
trail on the screen protocol. Admins only; anyone else gets 404."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request

from doctordesk.domain.accounts.passwords import Passwords
from doctordesk.domain.audit import AuditFilter
from doctordesk.domain.cursors import MAX_CURSOR_CHARS, decode_cursor
from doctordesk.domain.inputs import MAX_ID, parse_id
from doctordesk.domain.roles import Role
from doctordesk.screens.viewing import Viewing
from doctordesk.services.admin import audit_screen, sign_in_screen, users_screen
from doctordesk.services.admin import hours_screen as hours
from doctordesk.web.deps import SCREEN_HEADERS, FormDep, ScreenRequest, ScreenRequestDep
from doctordesk.web.params import STRICT_ID
from doctordesk.web.responses import SUBMIT_RESPONSES
from doctordesk.web.routers.admin import forms
from doctordesk.web.routers.admin.audit import FilterDep
from doctordesk.web.screen_routes import Route, screen_routes

router = APIRouter(prefix="/profile/admin", tags=["administration screens"])

UserId = Annotated[int, Path(ge=1, le=MAX_ID, description="The user"), STRICT_ID]
LocationId = Annotated[int, Path(ge=1, le=MAX_ID, description="The location"), STRICT_ID]
RoleName = Literal["doctor", "support", "patient", "admin"]


def _passwords(request: Request) -> Passwords:
    passwords: Passwords = request.app.state.passwords
    return passwords


# --- users -----------------------------------------------------------------------------------------------------


def _users(screen: ScreenRequest, role: RoleName | None, after: int | None) -> Viewing:
    return users_screen.users_list(
        screen.rt, screen.actor, role=Role(role) if role else None, after=after, layout=screen.layout,
        client_id=screen.client_id,
    )  # fmt: skip


Role_ = Annotated[RoleName | None, Query(description="Only this role")]
After = Annotated[int | None, Query(ge=1, le=MAX_ID, description="Continue after this user id"), STRICT_ID]


screen_routes(
    router,
    "/users",
    _users,
    page=Route("users_page", "The users, a page at a time, optionally of one role."),
    poll=Route("users_poll", "The user list's poll."),
    params={"role": (Role_, None), "after": (After, None)},
)


@router.patch("/users/filter", responses=SUBMIT_RESPONSES)
async def users_filter(screen: ScreenRequestDep, form: FormDep) -> dict[str, Any]:
    """Another role chosen (``role``, empty for all): navigates to that list."""
    return users_screen.filter_users(screen.rt, screen.actor, form).to_json()


def _new(screen: ScreenRequest) -> Viewing:
    return screen.viewing(users_screen.new_user)


screen_routes(
    router,
    "/users/new",
    _new,
    page=Route("new_user_page", "The form for a new user."),
    poll=Route("new_user_poll", "The new-user form's poll."),
)


@router.post("/users/create", responses=SUBMIT_RESPONSES, openapi_extra={**SCREEN_HEADERS, **forms.NEW_USER_BODY})
async def create_user(screen: ScreenRequestDep, request: Request, form: FormDep) -> dict[str, Any]:
    """Create a user (``role``, ``username``, ``display_name``, optional ``password``; doctors: ``specialty``,
    ``timezone``, ``can_prescribe``, ``chat_enabled``). A generated password is shown on the answer only."""
    update = await users_screen.create_user(screen.rt, _passwords(request), screen.actor, form, state=screen.state)
    return update.to_json()


def _user(screen: ScreenRequest, user_id: int) -> Viewing:
    return screen.viewing(users_screen.user_page, user_id)


screen_routes(
    router,
    "/users/{user_id}",
    _user,
    page=Route("user_page", "One user: profile, doctor profile, deactivation, a new password."),
    poll=Route("user_poll", "The user page's poll."),
    params={"user_id": UserId},
)


@router.post(
    "/users/{user_id}/save", responses=SUBMIT_RESPONSES, openapi_extra={**SCREEN_HEADERS, **forms.SAVE_USER_BODY}
)
async def save_user(screen: ScreenRequestDep, user_id: UserId, form: FormDep) -> dict[str, Any]:
    """Save the profile form."""
    return await screen.submit(users_screen.save_user, user_id, form, page=_user(screen, user_id))


@router.post("/users/{user_id}/deactivate", responses=SUBMIT_RESPONSES)
async def deactivate_user(screen: ScreenRequestDep, user_id: UserId) -> dict[str, Any]:
    """Deactivate: the user's tokens stop working and their streams close, on every instance."""
    return await screen.submit(users_screen.set_active, user_id, active=False, page=_user(screen, user_id))


@router.post("/users/{user_id}/reactivate", responses=SUBMIT_RESPONSES)
async def reactivate_user(screen: ScreenRequestDep, user_id: UserId) -> dict[str, Any]:
    """Reactivate a deactivated user."""
    return await screen.submit(users_screen.set_active, user_id, active=True, page=_user(screen, user_id))


@router.post("/users/{user_id}/password", responses=SUBMIT_RESPONSES)
async def reset_password(screen: ScreenRequestDep, request: Request, user_id: UserId) -> dict[str, Any]:
    """A new generated password, shown on this answer only; the user is signed out everywhere."""
    page = _user(screen, user_id)
    update = await users_screen.reset_password(
        screen.rt, _passwords(request), screen.actor, user_id, page=page, state=screen.state
    )
    return update.to_json()


@router.post("/users/{user_id}/password-link", responses=SUBMIT_RESPONSES)
async def password_link(screen: ScreenRequestDep, request: Request, user_id: UserId) -> dict[str, Any]:
    """A one-time link through which the user sets their own password, shown on this answer only."""
    return await screen.submit(users_screen.password_link, user_id, str(request.base_url), page=_user(screen, user_id))


# --- locations -------------------------------------------------------------------------------------------------


def _locations(screen: ScreenRequest) -> Viewing:
    return screen.viewing(users_screen.locations)


screen_routes(
    router,
    "/locations",
    _locations,
    page=Route("locations_page", "The locations, each editable, and a form for a new one."),
    poll=Route("locations_poll", "The locations screen's poll."),
)


@router.post(
    "/locations/create", responses=SUBMIT_RESPONSES, openapi_extra={**SCREEN_HEADERS, **forms.NEW_LOCATION_BODY}
)
async def create_location(screen: ScreenRequestDep, form: FormDep) -> dict[str, Any]:
    """Add a location (``name``, ``timezone``, optional ``address``)."""
    return await screen.submit(users_screen.save_location, None, form, page=_locations(screen))


@router.post(
    "/locations/{location_id}/save",
    responses=SUBMIT_RESPONSES,
    openapi_extra={**SCREEN_HEADERS, **forms.SAVE_LOCATION_BODY},
)
async def save_location(screen: ScreenRequestDep, location_id: LocationId, form: FormDep) -> dict[str, Any]:
    """Save a location's name, address or time zone."""
    return await screen.submit(users_screen.save_location, location_id, form, page=_locations(screen))


# --- work hours ------------------------------------------------------------------------------------------------

DoctorQ = Annotated[int | None, Query(ge=1, le=MAX_ID, description="The doctor (user id)"), STRICT_ID]
LocationQ = Annotated[int | None, Query(ge=1, le=MAX_ID, description="The location"), STRICT_ID]
Confirm = Annotated[bool, Query(description="Apply even if approved appointments end up outside the hours")]
ExceptionId = Annotated[int, Path(ge=1, le=MAX_ID, description="The exception"), STRICT_ID]


def _hours(screen: ScreenRequest, doctor: int | None, location: int | None) -> Viewing:
    return screen.viewing(hours.hours_page, doctor_id=doctor, location_id=location)


def _hours_of(screen: ScreenRequest, form: dict[str, str]) -> Viewing:
    return _hours(screen, parse_id(form.get("doctor")), parse_id(form.get("location")))


screen_routes(
    router,
    "/hours",
    _hours,
    page=Route("hours_page", "A doctor's weekly hours at a location, and their dated exceptions."),
    poll=Route("hours_poll", "The work-hours screen's poll."),
    params={"doctor": (DoctorQ, None), "location": (LocationQ, None)},
)


@router.patch("/hours/choose", responses=SUBMIT_RESPONSES)
async def hours_choose(screen: ScreenRequestDep, form: FormDep) -> dict[str, Any]:
    """Another doctor or location (``doctor``, ``location``): navigates to its hours."""
    return hours.choose(screen.rt, screen.actor, form).to_json()


@router.post("/hours/save", responses=SUBMIT_RESPONSES, openapi_extra={**SCREEN_HEADERS, **forms.WEEKLY_BODY})
async def hours_save(screen: ScreenRequestDep, form: FormDep, confirm: Confirm = False) -> dict[str, Any]:
    """Replace the weekly hours at the location (``weekday~n``, ``opens~n``, ``closes~n``; lines without a day
    are dropped). Without ``confirm``, a change leaving approved appointments outside is not applied: the answer
    lists them."""
    return await screen.submit(hours.save_weekly, form, confirm=confirm, page=_hours_of(screen, form))


@router.post(
    "/hours/exceptions/add", responses=SUBMIT_RESPONSES, openapi_extra={**SCREEN_HEADERS, **forms.EXCEPTION_BODY}
)
async def hours_add_exception(screen: ScreenRequestDep, form: FormDep, confirm: Confirm = False) -> dict[str, Any]:
    """Add a holiday, an absence or an extra day (``doctor``, ``day``, ``kind``, ``location`` empty for all,
    ``opens``, ``closes``, ``note``); conflicts as for the weekly hours."""
    return await screen.submit(hours.add_exception, form, confirm=confirm, page=_hours_of(screen, form))


@router.post("/hours/exceptions/{exception_id}/remove", responses=SUBMIT_RESPONSES)
async def hours_remove_exception(
    screen: ScreenRequestDep, exception_id: ExceptionId, confirm: Confirm = False
) -> dict[str, Any]:
    """Withdraw an exception (kept in the records); conflicts as for the weekly hours."""
    return await screen.submit(hours.remove_exception, exception_id, confirm=confirm, page=_hours(screen, None, None))


# --- audit trail -----------------------------------------------------------------------------------------------

Cursor = Annotated[str | None, Query(max_length=MAX_CURSOR_CHARS, description="Where the page starts")]


def _audit(screen: ScreenRequest, f: AuditFilter, cursor: str | None) -> Viewing:
    after = decode_cursor(cursor) if cursor is not None else None
    return screen.viewing(audit_screen.audit_screen, f, after=after, cursor=cursor)


screen_routes(
    router,
    "/audit",
    _audit,
    page=Route("audit_page", "The audit trail, newest first, filtered as the query says, with its exports."),
    poll=Route("audit_poll", "The audit trail screen's poll."),
    params={"f": FilterDep, "cursor": (Cursor, None)},
)


@router.patch("/audit/filter", responses=SUBMIT_RESPONSES, openapi_extra=forms.AUDIT_FILTER_BODY)
async def audit_filter_form(screen: ScreenRequestDep, form: FormDep) -> dict[str, Any]:
    """The filter form (``actor``, ``appointment``, ``action``, ``from`` and ``to`` days): navigates to it."""
    return audit_screen.apply_filters(screen.rt, screen.actor, form).to_json()


# --- signing in --------------------------------------------------------------------------------------------------


def _sign_in(screen: ScreenRequest) -> Viewing:
    return screen.viewing(sign_in_screen.sign_in)


screen_routes(
    router,
    "/sign-in",
    _sign_in,
    page=Route(
        "sign_in_page",
        "Which roles must use a second factor, the users who have one, the single sign-on providers.",
    ),
    poll=Route("sign_in_poll", "The signing-in screen's poll."),
)


@router.post("/sign-in/policy", responses=SUBMIT_RESPONSES, openapi_extra={**SCREEN_HEADERS, **forms.MFA_POLICY_BODY})
async def save_mfa_policy(screen: ScreenRequestDep, form: FormDep) -> dict[str, Any]:
    """Save which roles must use a second factor (``required~<role>``: true or false)."""
    return await screen.submit(sign_in_screen.save_policy, form, page=_sign_in(screen))


@router.post("/sign-in/{user_id}/reset", responses=SUBMIT_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def reset_factors(screen: ScreenRequestDep, user_id: UserId) -> dict[str, Any]:
    """Remove every second factor of a user (a lost phone)."""
    return await screen.submit(sign_in_screen.reset, user_id, page=_sign_in(screen))
