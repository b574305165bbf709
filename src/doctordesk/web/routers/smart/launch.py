"""EHR launch (docs/smart.md#ehr-launch): a record system (its API key, with ``appointments:read``) or an admin
asks for a single-use ``launch`` value binding one app's launch to one patient."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import Field

from doctordesk.domain.errors import Unauthorized
from doctordesk.domain.inputs import MAX_ID
from doctordesk.domain.integration import Integration, looks_like_key
from doctordesk.domain.roles import Actor
from doctordesk.domain.texts import N_
from doctordesk.services.accounts import auth
from doctordesk.services.integration import api_keys
from doctordesk.services.smart import launches
from doctordesk.web.bodies import StrictBody
from doctordesk.web.deps import RuntimeDep, api_key_header, bearer, bearer_token, speak
from doctordesk.web.responses import SUBMIT_RESPONSES

router = APIRouter(prefix="/smart", tags=["SMART App Launch"])


async def launch_caller(
    rt: RuntimeDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    header_key: Annotated[str | None, Depends(api_key_header)],
) -> Actor | Integration:
    """A record system by its API key (bearer ``ddk_...`` or X-Api-Key), or a user by their access token."""
    token = bearer_token(credentials)
    if header_key is not None:
        if token is not None and token != header_key:
            raise Unauthorized(N_("Send one credential: in Authorization or in X-Api-Key."))
        return await api_keys.authenticate(rt, header_key)
    if token is not None and looks_like_key(token):
        return await api_keys.authenticate(rt, token)
    actor = await auth.authenticate(rt, token)
    speak(actor)
    return actor


class LaunchIn(StrictBody):
    client_id: str = Field(
        min_length=1, max_length=64, pattern=r"^[!-~]+$", description="The app to launch (its client id)"
    )
    patient: int = Field(ge=1, le=MAX_ID, description="The patient in context (their FHIR Patient id)")


@router.post("/launch", status_code=201, responses=SUBMIT_RESPONSES)
async def issue_launch(
    rt: RuntimeDep, request: Request, caller: Annotated[Actor | Integration, Depends(launch_caller)], body: LaunchIn
) -> dict[str, Any]:
    """A single-use `launch` value (valid 5 minutes) for one app and one patient, with the FHIR base (`iss`) and,
    when the app registered a launch URL, that URL with `iss` and `launch` added: where to send the browser."""
    base = str(request.base_url).rstrip("/")
    issued = await launches.issue(rt, caller, client_id=body.client_id, patient=body.patient, fhir_base=base + "/fhir")
    return {
        "launch": issued.launch,
        "iss": issued.iss,
        "expires_in": issued.expires_in,
        "launch_url": issued.launch_url,
    }
