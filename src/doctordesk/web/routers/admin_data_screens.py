"""The administration screens for the clinic's reference data (docs/administration.md): fees as dated versions,
and webhook endpoints with their delivery log. Admins only; anyone else gets 404."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path

from doctordesk.domain.inputs import MAX_ID
from doctordesk.screens.viewing import Viewing
from doctordesk.services import admin_fee_screen as fees
from doctordesk.services import admin_webhook_screens as hooks
from doctordesk.web.deps import SCREEN_HEADERS, FormDep, ScreenRequest, ScreenRequestDep
from doctordesk.web.params import STRICT_ID
from doctordesk.web.responses import SCREEN_RESPONSES, SUBMIT_RESPONSES

router = APIRouter(prefix="/profile/admin", tags=["administration screens"])

EndpointId = Annotated[int, Path(ge=1, le=MAX_ID, description="The webhook endpoint"), STRICT_ID]
DeliveryId = Annotated[int, Path(ge=1, le=MAX_ID, description="The delivery"), STRICT_ID]


# --- fees ------------------------------------------------------------------------------------------------------


def _fees(screen: ScreenRequest) -> Viewing:
    return fees.fees_page(screen.rt, screen.actor, layout=screen.layout, client_id=screen.client_id)


@router.put("/fees", responses=SCREEN_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def fees_page(screen: ScreenRequestDep) -> dict[str, Any]:
    """The fee rules in force, a form for a new version, and every version recorded."""
    return (await _fees(screen).page()).to_json()


@router.patch("/fees", responses=SCREEN_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def fees_poll(screen: ScreenRequestDep) -> dict[str, Any]:
    """The fees screen's poll."""
    return (await _fees(screen).poll(screen.state)).to_json()


@router.post("/fees/add", responses=SUBMIT_RESPONSES)
async def add_fee_version(screen: ScreenRequestDep, form: FormDep) -> dict[str, Any]:
    """A new version of a rule (``kind``, ``doctor`` and ``location`` empty for any, ``amount`` such as 80.50,
    ``percent`` for surcharges, ``currency``, ``effective_from`` day, ``retired``)."""
    return (await fees.add_version(screen.rt, screen.actor, form, page=_fees(screen), state=screen.state)).to_json()


# --- webhooks --------------------------------------------------------------------------------------------------


def _hooks(screen: ScreenRequest) -> Viewing:
    return hooks.list_page(screen.rt, screen.actor, layout=screen.layout, client_id=screen.client_id)


def _hook(screen: ScreenRequest, endpoint_id: int) -> Viewing:
    return hooks.endpoint_page(screen.rt, screen.actor, endpoint_id, layout=screen.layout, client_id=screen.client_id)


@router.put("/webhooks", responses=SCREEN_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def webhooks_page(screen: ScreenRequestDep) -> dict[str, Any]:
    """The webhook endpoints and a form to register one."""
    return (await _hooks(screen).page()).to_json()


@router.patch("/webhooks", responses=SCREEN_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def webhooks_poll(screen: ScreenRequestDep) -> dict[str, Any]:
    """The webhook list's poll."""
    return (await _hooks(screen).poll(screen.state)).to_json()


@router.post("/webhooks/create", responses=SUBMIT_RESPONSES)
async def register_webhook(screen: ScreenRequestDep, form: FormDep) -> dict[str, Any]:
    """Register an endpoint (``url``, ``description``, ``type~<event type>`` per type, ``include_content``); the
    signing secret is on this answer only."""
    return (await hooks.create(screen.rt, screen.actor, form, page=_hooks(screen), state=screen.state)).to_json()


@router.put("/webhooks/{endpoint_id}", responses=SCREEN_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def webhook_page(screen: ScreenRequestDep, endpoint_id: EndpointId) -> dict[str, Any]:
    """One endpoint: settings, status, test event, delivery log with replays."""
    return (await _hook(screen, endpoint_id).page()).to_json()


@router.patch("/webhooks/{endpoint_id}", responses=SCREEN_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def webhook_poll(screen: ScreenRequestDep, endpoint_id: EndpointId) -> dict[str, Any]:
    """The endpoint page's poll."""
    return (await _hook(screen, endpoint_id).poll(screen.state)).to_json()


@router.post("/webhooks/{endpoint_id}/save", responses=SUBMIT_RESPONSES)
async def save_webhook(screen: ScreenRequestDep, endpoint_id: EndpointId, form: FormDep) -> dict[str, Any]:
    """Save the endpoint's settings form."""
    page = _hook(screen, endpoint_id)
    return (await hooks.save(screen.rt, screen.actor, endpoint_id, form, page=page, state=screen.state)).to_json()


@router.post("/webhooks/{endpoint_id}/disable", responses=SUBMIT_RESPONSES)
async def disable_webhook(screen: ScreenRequestDep, endpoint_id: EndpointId) -> dict[str, Any]:
    """Disable: deliveries wait until the endpoint is enabled again."""
    page = _hook(screen, endpoint_id)
    update = await hooks.set_enabled(screen.rt, screen.actor, endpoint_id, enabled=False, page=page, state=screen.state)
    return update.to_json()


@router.post("/webhooks/{endpoint_id}/enable", responses=SUBMIT_RESPONSES)
async def enable_webhook(screen: ScreenRequestDep, endpoint_id: EndpointId) -> dict[str, Any]:
    """Enable again."""
    page = _hook(screen, endpoint_id)
    update = await hooks.set_enabled(screen.rt, screen.actor, endpoint_id, enabled=True, page=page, state=screen.state)
    return update.to_json()


@router.post("/webhooks/{endpoint_id}/test", responses=SUBMIT_RESPONSES)
async def test_webhook(screen: ScreenRequestDep, endpoint_id: EndpointId) -> dict[str, Any]:
    """Queue a test event to the endpoint."""
    page = _hook(screen, endpoint_id)
    return (await hooks.send_test(screen.rt, screen.actor, endpoint_id, page=page, state=screen.state)).to_json()


@router.post("/webhooks/{endpoint_id}/deliveries/{delivery_id}/replay", responses=SUBMIT_RESPONSES)
async def replay_delivery(screen: ScreenRequestDep, endpoint_id: EndpointId, delivery_id: DeliveryId) -> dict[str, Any]:
    """Send a delivery again under its own ``webhook-id``."""
    page = _hook(screen, endpoint_id)
    update = await hooks.replay(screen.rt, screen.actor, endpoint_id, delivery_id, page=page, state=screen.state)
    return update.to_json()
