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
from doctordesk.services.admin import mail_screen
from doctordesk.services.waitlist import admin_screen as waitlist_screen
from doctordesk.services.webhooks import screen as hooks
from doctordesk.web.deps import SCREEN_HEADERS, FormDep, ScreenRequest, ScreenRequestDep
from doctordesk.web.params import STRICT_ID
from doctordesk.web.responses import SUBMIT_RESPONSES
from doctordesk.web.routers.admin import forms
from doctordesk.web.screen_routes import Route, screen_routes

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
    return screen.viewing(fees.fees_page)


screen_routes(
    router,
    "/fees",
    _fees,
    page=Route("fees_page", "The fee rules in force, a form for a new version, and every version recorded."),
    poll=Route("fees_poll", "The fees screen's poll."),
)


@router.post("/fees/add", responses=SUBMIT_RESPONSES, openapi_extra={**SCREEN_HEADERS, **forms.FEE_BODY})
async def add_fee_version(screen: ScreenRequestDep, form: FormDep, confirm: FeeConfirm = None) -> dict[str, Any]:
    """A new version of a rule (``kind``, ``doctor`` and ``location`` empty for any, ``amount`` such as 80.50,
    required for fees, ``percent`` required for surcharges, ``currency``, ``effective_from`` day, ``retired``).
    Without ``confirm`` nothing is written: the answer says what the version changes, for whom, from when, and
    its "Confirm" sends the same form with ``confirm`` set to that version's digest."""
    return await screen.submit(fees.add_version, form, confirm=confirm, page=_fees(screen))


# --- insurance -------------------------------------------------------------------------------------------------


def _insurance(screen: ScreenRequest, patient: int | None) -> Viewing:
    return screen.viewing(insurance.insurance_page, patient_id=patient)


screen_routes(
    router,
    "/insurance",
    _insurance,
    page=Route(
        "insurance_page",
        ("The insurers, a patient's policies (coverage, network, exclusions, the insurer's record), a new policy."),
    ),
    poll=Route("insurance_poll", "The insurance screen's poll."),
    params={"patient": (PatientQ, None)},
)


@router.patch("/insurance/choose", responses=SUBMIT_RESPONSES)
async def insurance_choose(screen: ScreenRequestDep, form: FormDep) -> dict[str, Any]:
    """Another patient (``patient``): navigates to their policies."""
    return insurance.choose(screen.rt, screen.actor, form).to_json()


@router.post("/insurance/create", responses=SUBMIT_RESPONSES, openapi_extra={**SCREEN_HEADERS, **forms.NEW_POLICY_BODY})
async def create_policy(screen: ScreenRequestDep, form: FormDep) -> dict[str, Any]:
    """Add a policy for ``patient`` (``insurer``, ``policy_number``, ``valid_from``, ``valid_to`` required;
    ``network_doctor~<id>``, ``network_location~<id>``, ``excluded_doctor~<id>`` ticks, ``excluded_services``
    comma-separated, ``third_party_data``)."""
    return await screen.submit(insurance.create_policy, form, page=_insurance(screen, parse_id(form.get("patient"))))


@router.post(
    "/insurance/policies/{policy_id}/save",
    responses=SUBMIT_RESPONSES,
    openapi_extra={**SCREEN_HEADERS, **forms.SAVE_POLICY_BODY},
)
async def save_policy(screen: ScreenRequestDep, policy_id: PolicyId, form: FormDep) -> dict[str, Any]:
    """Save a policy's form; the ticks replace its lists whole, an empty record clears it."""
    page = _insurance(screen, parse_id(form.get("patient")))
    return await screen.submit(insurance.save_policy, policy_id, form, page=page)


# --- mail ------------------------------------------------------------------------------------------------------


def _mail(screen: ScreenRequest) -> Viewing:
    return screen.viewing(mail_screen.mail_page)


screen_routes(
    router,
    "/mail",
    _mail,
    page=Route("mail_page", "Patients' mail: the mails not sent, and the latest with their state."),
    poll=Route("mail_poll", "The mail screen's poll."),
)


# --- the waitlist ----------------------------------------------------------------------------------------------

WaitlistDoctor = Annotated[int | None, Query(ge=1, le=MAX_ID, description="The doctor (default: the first)"), STRICT_ID]


def _waitlist(screen: ScreenRequest, doctor: int | None = None) -> Viewing:
    return screen.viewing(waitlist_screen.waitlist_page, doctor_id=doctor)


screen_routes(
    router,
    "/waitlist",
    _waitlist,
    page=Route("admin_waitlist_page", "The waitlist of one doctor, in order of waiting, with the times offered now."),
    poll=Route("admin_waitlist_poll", "The admin waitlist screen's poll."),
    params={"doctor": (WaitlistDoctor, None)},
)


# --- webhooks --------------------------------------------------------------------------------------------------


def _hooks(screen: ScreenRequest) -> Viewing:
    return screen.viewing(hooks.list_page)


def _hook(screen: ScreenRequest, endpoint_id: int) -> Viewing:
    return screen.viewing(hooks.endpoint_page, endpoint_id)


screen_routes(
    router,
    "/webhooks",
    _hooks,
    page=Route("webhooks_page", "The webhook endpoints and a form to register one."),
    poll=Route("webhooks_poll", "The webhook list's poll."),
)


@router.post("/webhooks/create", responses=SUBMIT_RESPONSES, openapi_extra={**SCREEN_HEADERS, **forms.NEW_WEBHOOK_BODY})
async def register_webhook(screen: ScreenRequestDep, form: FormDep) -> dict[str, Any]:
    """Register an endpoint (``url``, ``description``, ``type~<event type>`` per type, ``include_content``); the
    signing secret is on this answer only."""
    return await screen.submit(hooks.create, form, page=_hooks(screen))


screen_routes(
    router,
    "/webhooks/{endpoint_id}",
    _hook,
    page=Route("webhook_page", "One endpoint: settings, status, test event, delivery log with replays."),
    poll=Route("webhook_poll", "The endpoint page's poll."),
    params={"endpoint_id": EndpointId},
)


@router.post(
    "/webhooks/{endpoint_id}/save",
    responses=SUBMIT_RESPONSES,
    openapi_extra={**SCREEN_HEADERS, **forms.SAVE_WEBHOOK_BODY},
)
async def save_webhook(screen: ScreenRequestDep, endpoint_id: EndpointId, form: FormDep) -> dict[str, Any]:
    """Save the endpoint's settings form."""
    return await screen.submit(hooks.save, endpoint_id, form, page=_hook(screen, endpoint_id))


@router.post("/webhooks/{endpoint_id}/disable", responses=SUBMIT_RESPONSES)
async def disable_webhook(screen: ScreenRequestDep, endpoint_id: EndpointId) -> dict[str, Any]:
    """Disable: deliveries wait until the endpoint is enabled again."""
    return await screen.submit(hooks.set_enabled, endpoint_id, enabled=False, page=_hook(screen, endpoint_id))


@router.post("/webhooks/{endpoint_id}/enable", responses=SUBMIT_RESPONSES)
async def enable_webhook(screen: ScreenRequestDep, endpoint_id: EndpointId) -> dict[str, Any]:
    """Enable again."""
    return await screen.submit(hooks.set_enabled, endpoint_id, enabled=True, page=_hook(screen, endpoint_id))


@router.post("/webhooks/{endpoint_id}/test", responses=SUBMIT_RESPONSES)
async def test_webhook(screen: ScreenRequestDep, endpoint_id: EndpointId) -> dict[str, Any]:
    """Queue a test event to the endpoint."""
    return await screen.submit(hooks.send_test, endpoint_id, page=_hook(screen, endpoint_id))


@router.post("/webhooks/{endpoint_id}/rotate-secret", responses=SUBMIT_RESPONSES)
async def rotate_webhook_secret(screen: ScreenRequestDep, endpoint_id: EndpointId) -> dict[str, Any]:
    """A new signing secret, shown on this answer only; the previous one signs too for the overlap."""
    return await screen.submit(hooks.rotate_secret, endpoint_id, page=_hook(screen, endpoint_id))


@router.post("/webhooks/{endpoint_id}/deliveries/{delivery_id}/replay", responses=SUBMIT_RESPONSES)
async def replay_delivery(screen: ScreenRequestDep, endpoint_id: EndpointId, delivery_id: DeliveryId) -> dict[str, Any]:
    """Send a delivery again under its own ``webhook-id``."""
    return await screen.submit(hooks.replay, endpoint_id, delivery_id, page=_hook(screen, endpoint_id))
