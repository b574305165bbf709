"""Calendar feeds (docs/calendar-feed.md): the feed itself at its secret address (no other credentials, for
calendar apps), the doctor's JSON endpoints to make, rotate, read and revoke the address, an admin's revocation,
and the feed's screen. Everything but the feed and the admin's revocation is for doctors only; anyone else gets 404."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request, Response

from doctordesk.domain.inputs import MAX_ID
from doctordesk.domain.roles import Role
from doctordesk.screens.viewing import Viewing
from doctordesk.services.calendar import feed_screen as calendar_feed_screen
from doctordesk.services.calendar import feeds as calendar_feeds
from doctordesk.services.calendar.feeds import FeedInfo
from doctordesk.web.deps import ActorDep, RuntimeDep, ScreenRequest, ScreenRequestDep, require_roles
from doctordesk.web.params import STRICT_ID
from doctordesk.web.responses import NOT_FOUND, SCREEN_RESPONSES, SUBMIT_RESPONSES
from doctordesk.web.screen_routes import Route, screen_routes

feed_router = APIRouter(tags=["calendar feed"])
router = APIRouter(tags=["calendar feed"])

ICS = "text/calendar; charset=utf-8"
# A feed is personal and changes: no shared cache keeps it, and the address is not sent on as a referrer.
FEED_HEADERS = {
    "Cache-Control": "private, no-cache",
    "Content-Disposition": 'inline; filename="doctordesk.ics"',
    "Referrer-Policy": "no-referrer",
    "X-Robots-Tag": "noindex, nofollow",
}


def _base_url(request: Request) -> str:
    return str(request.base_url).rstrip("/")


def _feed_json(info: FeedInfo | None) -> dict[str, Any] | None:
    return None if info is None else asdict(info)


@feed_router.get(
    "/calendar/{token}.ics",
    response_class=Response,
    responses={
        200: {"content": {"text/calendar": {}}, "description": "The iCalendar feed"},
        304: {"description": "Unchanged since the ETag sent in If-None-Match"},
        404: NOT_FOUND,
    },
)
async def calendar_feed(
    rt: RuntimeDep,
    request: Request,
    token: Annotated[str, Path(max_length=128, description="The feed's secret, as shown when it was made")],
) -> Response:
    """A doctor's calendar feed (iCalendar, RFC 5545), for a calendar app to subscribe to. The secret in the path
    is the only credential; a malformed, unknown, rotated or revoked one is 404. With ``If-None-Match`` naming the
    current ``ETag`` the answer is 304."""
    known = request.headers.get("if-none-match", "").removeprefix("W/").strip('"')[:64] or None
    feed = await calendar_feeds.read_feed(rt, token, known=known)
    headers = {**FEED_HEADERS, "ETag": f'"{feed.etag}"'}
    if feed.body is None:
        return Response(status_code=304, headers=headers)
    return Response(content=feed.body, media_type=ICS, headers=headers)


# --- the doctor's JSON endpoints (the SDK's) ---------------------------------------------------------------------


@router.get("/api/calendar-feed", responses=SCREEN_RESPONSES)
async def get_calendar_feed(rt: RuntimeDep, actor: ActorDep) -> dict[str, Any]:
    """The doctor's live feed (``feed`` null when there is none): since when, the secret's first characters, when
    a calendar last fetched it. Never the address: it is shown only when made."""
    return {"feed": _feed_json(await calendar_feeds.feed_status(rt, actor))}


@router.post("/api/calendar-feed", status_code=201, responses=SUBMIT_RESPONSES)
async def make_calendar_feed(rt: RuntimeDep, actor: ActorDep, request: Request) -> dict[str, Any]:
    """Make the doctor's feed address, or rotate it (the old one is 404 from the next fetch on). The answer's
    ``url`` is shown this once."""
    new = await calendar_feeds.make_feed(rt, actor)
    return {"url": _base_url(request) + calendar_feeds.feed_path(new.token), "feed": _feed_json(new.info)}


@router.delete("/api/calendar-feed", responses=SUBMIT_RESPONSES)
async def revoke_calendar_feed(rt: RuntimeDep, actor: ActorDep) -> dict[str, Any]:
    """Revoke the doctor's feed address (404 from the next fetch on). ``revoked`` is false when there was none."""
    return {"revoked": await calendar_feeds.revoke_feed(rt, actor)}


@router.delete(
    "/admin/users/{user_id}/calendar-feed",
    tags=["administration"],
    dependencies=[require_roles(Role.ADMIN)],
    responses=SUBMIT_RESPONSES,
)
async def admin_revoke_calendar_feed(
    rt: RuntimeDep,
    actor: ActorDep,
    user_id: Annotated[int, Path(ge=1, le=MAX_ID, description="The doctor"), STRICT_ID],
) -> dict[str, Any]:
    """An admin revokes a doctor's feed address (audited with the admin as actor; 404 for a user who is not a
    doctor). Admins only (403 for anyone else, as every administration route)."""
    return {"revoked": await calendar_feeds.revoke_feed(rt, actor, doctor_id=user_id)}


# --- the screen ----------------------------------------------------------------------------------------------------


def _screen(screen: ScreenRequest) -> Viewing:
    return screen.viewing(calendar_feed_screen.viewing)


screen_routes(
    router,
    "/profile/calendar-feed",
    _screen,
    page=Route("calendar_feed_page", "The calendar feed screen (doctors)."),
    poll=Route("calendar_feed_poll", "The calendar feed screen's poll."),
)


@router.post("/profile/calendar-feed/make", responses=SUBMIT_RESPONSES)
async def calendar_feed_make(screen: ScreenRequestDep, request: Request) -> dict[str, Any]:
    """Create or rotate the feed address; the answer shows it this once, with a Copy control."""
    return await screen.submit(calendar_feed_screen.make, base_url=_base_url(request), page=_screen(screen))


@router.post("/profile/calendar-feed/revoke", responses=SUBMIT_RESPONSES)
async def calendar_feed_revoke(screen: ScreenRequestDep) -> dict[str, Any]:
    """Revoke the feed address."""
    return await screen.submit(calendar_feed_screen.revoke, page=_screen(screen))
