"""The consent screen of a SMART launch, in the web app (docs/smart.md#consent): any signed-in user; its answer
(``leave``) sends the browser back to the app."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path

from doctordesk.screens.viewing import Viewing
from doctordesk.services.accounts import reauth
from doctordesk.services.smart import consent_screen
from doctordesk.web.deps import SCREEN_HEADERS, FormDep, ScreenRequest, ScreenRequestDep
from doctordesk.web.responses import SUBMIT_RESPONSES, form_body
from doctordesk.web.screen_routes import Route, screen_routes

router = APIRouter(prefix="/profile/smart", tags=["SMART App Launch"])

Ticket = Annotated[
    str, Path(pattern="^[A-Za-z0-9_-]{20,64}$", description="The launch's ticket, from the authorization endpoint")
]
ALLOW_BODY = form_body(
    {"patient": {"type": "string", "pattern": "^[0-9]{0,16}$", "description": "Staff launches: the patient's id"}}
)


def _page(screen: ScreenRequest, ticket: str) -> Viewing:
    return screen.viewing(consent_screen.viewing, ticket)


screen_routes(
    router,
    "/authorize/{ticket}",
    _page,
    page=Route(
        "consent_page",
        "The app's request: what it asks, a patient to pick (staff), Allow and Deny; 404 once answered or expired.",
    ),
    poll=Route("consent_poll", "The consent page's poll."),
    params={"ticket": Ticket},
)


@router.post("/authorize/{ticket}/allow", responses=SUBMIT_RESPONSES, openapi_extra={**SCREEN_HEADERS, **ALLOW_BODY})
async def allow(screen: ScreenRequestDep, ticket: Ticket, form: FormDep) -> dict[str, Any]:
    """Allow: the answer's ``leave`` is the app's redirect URI with a one-time code and the app's ``state``. Granting
    an app lasting access needs a recent sign-in (403 REAUTHENTICATION_REQUIRED: docs/smart.md#consent)."""
    await reauth.require_recent(screen.rt, screen.actor)
    update = await consent_screen.answer(screen.rt, screen.actor, ticket, form, allow=True)
    return update.to_json()


@router.post("/authorize/{ticket}/deny", responses=SUBMIT_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def deny(screen: ScreenRequestDep, ticket: Ticket) -> dict[str, Any]:
    """Deny: the answer's ``leave`` is the app's redirect URI with ``error=access_denied``."""
    update = await consent_screen.answer(screen.rt, screen.actor, ticket, {}, allow=False)
    return update.to_json()
