"""The SMART apps administration screen (docs/smart.md#clients). Admins only; anyone else gets 404."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path

from doctordesk.domain.inputs import MAX_ID, NON_BLANK_TEXT_PATTERN
from doctordesk.domain.names import NAME_PATTERN
from doctordesk.domain.smart.clients import ClientKind
from doctordesk.screens.viewing import Viewing
from doctordesk.services.smart import clients_screen
from doctordesk.web.deps import SCREEN_HEADERS, FormDep, ScreenRequest, ScreenRequestDep
from doctordesk.web.params import STRICT_ID
from doctordesk.web.responses import SUBMIT_RESPONSES, form_body
from doctordesk.web.screen_routes import Route, screen_routes

router = APIRouter(prefix="/profile/admin", tags=["administration screens"])

AppId = Annotated[int, Path(ge=1, le=MAX_ID, description="The app"), STRICT_ID]
NEW_APP_BODY = form_body(
    {
        "name": {"type": "string", "minLength": 1, "maxLength": 100, "pattern": NAME_PATTERN},
        "kind": {"type": "string", "enum": [k.value for k in ClientKind]},
        "redirect_uris": {
            "type": "string",
            "maxLength": 5000,
            "description": "Separated by spaces; empty for a backend service",
        },
        "allowed_scopes": {
            "type": "string",
            "minLength": 1,
            "maxLength": 2000,
            "pattern": NON_BLANK_TEXT_PATTERN,
            "description": "Separated by spaces",
        },
        "launch_url": {"type": "string", "maxLength": 500, "description": "Apps an EHR launches; empty: none"},
        "jwks_uri": {"type": "string", "maxLength": 500, "description": "Backend services: their JWKS URL"},
        "jwks": {"type": "string", "maxLength": 20000, "description": "Backend services: their JWKS as JSON"},
    },
    required=("name", "allowed_scopes"),
)


def _page(screen: ScreenRequest) -> Viewing:
    return screen.viewing(clients_screen.list_page)


screen_routes(
    router,
    "/smart-apps",
    _page,
    page=Route("smart_apps_page", "The registered SMART apps and a form to register one."),
    poll=Route("smart_apps_poll", "The SMART apps screen's poll."),
)


@router.post("/smart-apps/create", responses=SUBMIT_RESPONSES, openapi_extra={**SCREEN_HEADERS, **NEW_APP_BODY})
async def register_smart_app(screen: ScreenRequestDep, form: FormDep) -> dict[str, Any]:
    """Register an app; a confidential app's secret is on this answer only."""
    update = await clients_screen.create(screen.rt, screen.actor, form, page=_page(screen), state=screen.state)
    return update.to_json()


@router.post("/smart-apps/{app_id}/deactivate", responses=SUBMIT_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def deactivate_smart_app(screen: ScreenRequestDep, app_id: AppId) -> dict[str, Any]:
    """Deactivate an app: its tokens stop working at once."""
    return await screen.submit(clients_screen.set_active, app_id, active=False, page=_page(screen))


@router.post("/smart-apps/{app_id}/reactivate", responses=SUBMIT_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def reactivate_smart_app(screen: ScreenRequestDep, app_id: AppId) -> dict[str, Any]:
    """Reactivate an app."""
    return await screen.submit(clients_screen.set_active, app_id, active=True, page=_page(screen))
