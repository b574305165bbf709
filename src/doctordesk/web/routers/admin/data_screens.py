"""The administration screens for the clinic's reference data (docs/administration.md): fees as dated versions,
insurance policies (coverage, network membership, exclusions), and webhook endpoints with their delivery log.
Admins only; anyone else gets 404."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from doctordesk.domain.inputs import MAX_ID, parse_id
from doctordesk.screens.viewing import Viewing
from doctordesk.services.admin import fees_screen as fees
from doctordesk.services.admin import insurance_screen as insurance
from doctordesk.services.admin import webhooks_screen as hooks
from doctordesk.web.deps import SCREEN_HEADERS, FormDep, ScreenRequest, ScreenRequestDep
from doctordesk.web.params import STRICT_ID
from doctordesk.web.responses import SCREEN_RESPONSES, SUBMIT_RESPONSES
from doctordesk.web.routers.admin import forms

router = APIRouter(prefix="/profile/admin", tags=["administration screens"])

EndpointId = Annotated[int, Path(ge=1, le=MAX_ID, description="The webhook endpoint"), STRICT_ID]
PolicyId = Annotated[int, Path(ge=1, le=MAX_ID, description="The policy"), STRICT_ID]
PatientQ = Annotated[int | None, Query(ge=1, le=MAX_ID, description="The patient"), STRICT_ID]
FeeConfirm = Annotated[
    str | None,
    Query(
        pattern="^[0-9a-f]{16}$",
        description="The digest of the version a confirmation showed: saves only if the form still describes it",
    ),
]
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


@router.post("/fees/add", responses=SUBMIT_RESPONSES, openapi_extra={**SCREEN_HEADERS, **forms.FEE_BODY})
async def add_fee_version(screen: ScreenRequestDep, form: FormDep, confirm: FeeConfirm = None) -> dict[str, Any]:
    """A new version of a rule (``kind``, ``doctor`` and ``location`` empty for any, ``amount`` such as 80.50,
    required for fees, ``percent`` required for surcharges, ``currency``, ``effective_from`` day, ``retired``).
    Without ``confirm`` nothing is written: the answer says what the version changes, for whom, from when, and
    its "Confirm" sends the same form with ``confirm`` set to that version's digest."""
    update = await fees.add_version(
        screen.rt, screen.actor, form, confirm=confirm, page=_fees(screen), state=screen.state
    )
    return update.to_json()


# --- insurance -------------------------------------------------------------------------------------------------


def _insurance(screen: ScreenRequest, patient: int | None) -> Viewing:
    return insurance.insurance_page(
        screen.rt, screen.actor, patient_id=patient, layout=screen.layout, client_id=screen.client_id
    )


@router.put("/insurance", responses=SCREEN_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def insurance_page(screen: ScreenRequestDep, patient: PatientQ = None) -> dict[str, Any]:
    """The insurers, a patient's policies (coverage, network, exclusions, the insurer's record), a new policy."""
    return (await _insurance(screen, patient).page()).to_json()


@router.patch("/insurance", responses=SCREEN_RESPONSES, openapi_extra=SCREEN_HEADERS)
async def insurance_poll(screen: ScreenRequestDep, patient: PatientQ = None) -> dict[str, Any]:
    """The insurance screen's poll."""
    return (await _insurance(screen, patient).poll(screen.state)).to_json()


@router.patch("/insurance/choose", responses=SUBMIT_RESPONSES)
async def insurance_choose(screen: ScreenRequestDep, form: FormDep) -> dict[str, Any]:
    """Another patient (``patient``): navigates to their policies."""
    return insurance.choose(screen.rt, screen.actor, form).to_json()


@router.post("/insurance/create", responses=SUBMIT_RESPONSES, openapi_extra={**SCREEN_HEADERS, **forms.NEW_POLICY_BODY})
async def create_policy(screen: ScreenRequestDep, form: FormDep) -> dict[str, Any]:
    """Add a policy for ``patient`` (``insurer``, ``policy_number``, ``valid_from``, ``valid_to`` required;
    ``network_doctor~<id>``, ``network_location~<id>``, ``excluded_doctor~<id>`` ticks, ``excluded_services``
    comma-separated, ``third_party_data``)."""
    page = _insurance(screen, parse_id(form.get("patient")))
    return (await insurance.create_policy(screen.rt, screen.actor, form, page=page, state=screen.state)).to_json()


@router.post(
    "/insurance/policies/{policy_id}/save",
    responses=SUBMIT_RESPONSES,
    openapi_extra={**SCREEN_HEADERS, **forms.SAVE_POLICY_BODY},
)
async def save_policy(screen: ScreenRequestDep, policy_id: PolicyId, form: FormDep) -> dict[str, Any]:
    """Save a policy's form; the ticks replace its lists whole, an empty record clears it."""
    page = _insurance(screen, parse_id(form.get("patient")))
    update = await insurance.save_policy(screen.rt, screen.actor, policy_id, form, page=page, state=screen.state)
    return update.to_json()


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


@router.post("/webhooks/create", responses=SUBMIT_RESPONSES, openapi_extra={**SCREEN_HEADERS, **forms.NEW_WEBHOOK_BODY})
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


@router.post(
    "/webhooks/{endpoint_id}/save",
    responses=SUBMIT_RESPONSES,
    openapi_extra={**SCREEN_HEADERS, **forms.SAVE_WEBHOOK_BODY},
)
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


@router.post("/webhooks/{endpoint_id}/rotate-secret", responses=SUBMIT_RESPONSES)
async def rotate_webhook_secret(screen: ScreenRequestDep, endpoint_id: EndpointId) -> dict[str, Any]:
    """A new signing secret, shown on this answer only; the previous one signs too for the overlap."""
    page = _hook(screen, endpoint_id)
    return (await hooks.rotate_secret(screen.rt, screen.actor, endpoint_id, page=page, state=screen.state)).to_json()


@router.post("/webhooks/{endpoint_id}/deliveries/{delivery_id}/replay", responses=SUBMIT_RESPONSES)
async def replay_delivery(screen: ScreenRequestDep, endpoint_id: EndpointId, delivery_id: DeliveryId) -> dict[str, Any]:
    """Send a delivery again under its own ``webhook-id``."""
    page = _hook(screen, endpoint_id)
    update = await hooks.replay(screen.rt, screen.actor, endpoint_id, delivery_id, page=page, state=screen.state)
    return update.to_json()
