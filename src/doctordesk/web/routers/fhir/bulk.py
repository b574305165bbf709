"""FHIR Bulk Data Access 2.0 (docs/fhir.md#bulk-export) and the Groups it exports: thin routes over
``services/fhir/bulk/``. Kick-off answers 202 with ``Content-Location`` (the status URL); the status URL answers
202 with ``X-Progress`` and ``Retry-After`` while the job runs, 200 with the manifest when done, and takes DELETE to
cancel; each file is read under the status URL with the same credentials. Served before the FHIR router's own
routes, whose catch-all would otherwise answer these paths."""

from __future__ import annotations

from datetime import datetime
from email.utils import format_datetime
from typing import Annotated, Any

from fastapi import APIRouter, Header, Request, Response
from fastapi.responses import FileResponse, JSONResponse

from doctordesk.domain.errors import NotFound
from doctordesk.domain.fhir import bulk as bulk_rules
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.domain.fhir.bulk import JobStatus, Level
from doctordesk.domain.texts import N_, Text
from doctordesk.i18n import _
from doctordesk.services.fhir.bulk import groups, jobs
from doctordesk.services.fhir.search import Search
from doctordesk.web.deps import FhirCallerDep, RuntimeDep
from doctordesk.web.routers.fhir.http import FhirResponse, FhirRoute, fhir_responses

router = APIRouter(
    prefix="/fhir",
    tags=["FHIR R4"],
    route_class=FhirRoute,
    default_response_class=FhirResponse,
    responses=fhir_responses(),
)

STATUS_PATH = "$export-status"
PreferAsync = Annotated[str | None, Header(description="respond-async (required: an export runs in the background)")]
_KICKOFF_DOCS: dict[int | str, dict[str, Any]] = {
    202: {
        "description": "queued: `Content-Location` is the status URL",
        "headers": {"Content-Location": {"schema": {"type": "string"}}},
    }
}


def _base(request: Request) -> str:
    return str(request.base_url).rstrip("/") + "/fhir"


def _group_id(raw: str) -> int:
    row_id = fhir_mapping.parse_logical_id(raw)
    if row_id is None:
        raise NotFound(N_("Group not found."))
    return row_id


async def _kick_off(
    rt: RuntimeDep, caller: FhirCallerDep, request: Request, prefer: str | None, level: Level, group: int | None
) -> FhirResponse:
    public_id = await jobs.kick_off(
        rt,
        caller,
        level=level,
        items=list(request.query_params.multi_items()),
        request_url=str(request.url),
        prefer=prefer,
        group_id=group,
    )
    status_url = f"{_base(request)}/{STATUS_PATH}/{public_id}"
    message = _(Text("The export is queued; its status is at {url}.", url=status_url))
    body = fhir_mapping.outcome([{"severity": "information", "code": "informational", "details": {"text": message}}])
    return FhirResponse(body, status_code=202, headers={"Content-Location": status_url})


@router.get("/$export", responses=_KICKOFF_DOCS)
async def export_clinic(
    rt: RuntimeDep, caller: FhirCallerDep, request: Request, prefer: PreferAsync = None
) -> FhirResponse:
    """Export the whole clinic (patients, doctors, locations, appointments, panels) as NDJSON files: ``_type``,
    ``_since``, ``_outputFormat`` (``application/fhir+ndjson``); ``Prefer: respond-async`` required."""
    return await _kick_off(rt, caller, request, prefer, Level.SYSTEM, None)


@router.get("/Patient/$export", responses=_KICKOFF_DOCS)
async def export_patients(
    rt: RuntimeDep, caller: FhirCallerDep, request: Request, prefer: PreferAsync = None
) -> FhirResponse:
    """Export every patient and their appointments (the patient compartment)."""
    return await _kick_off(rt, caller, request, prefer, Level.PATIENT, None)


@router.get("/Group/{group_id}/$export", responses=_KICKOFF_DOCS)
async def export_group(
    rt: RuntimeDep, caller: FhirCallerDep, request: Request, group_id: str, prefer: PreferAsync = None
) -> FhirResponse:
    """Export one doctor's panel: its patients and their appointments with that doctor (a doctor their own)."""
    return await _kick_off(rt, caller, request, prefer, Level.GROUP, _group_id(group_id))


_STATUS_DOCS: dict[int | str, dict[str, Any]] = {
    200: {"description": "complete: the manifest", "content": {"application/json": {"schema": {"type": "object"}}}},
    202: {
        "description": "running: `X-Progress`, `Retry-After`",
        "headers": {"X-Progress": {"schema": {"type": "string"}}, "Retry-After": {"schema": {"type": "integer"}}},
    },
    500: {"description": "the export failed (OperationOutcome)"},
}


@router.get(f"/{STATUS_PATH}/{{job_id}}", responses=_STATUS_DOCS)
async def export_status(rt: RuntimeDep, caller: FhirCallerDep, request: Request, job_id: str) -> Response:
    """An export's status: 202 while it runs, 200 with the manifest when complete, 500 (OperationOutcome) when it
    failed; 404 when unknown, expired, cancelled or another requester's."""
    job = await jobs.status(rt, caller, job_id)
    if job.status is JobStatus.PENDING:
        progress = job.progress or "queued"
        headers = {"X-Progress": progress, "Retry-After": str(jobs.RETRY_SECONDS)}
        return Response(status_code=202, headers=headers)
    if job.status is JobStatus.ERROR:
        text = _(Text("The export failed: {error}", error=job.error or ""))
        body = fhir_mapping.outcome([{"severity": "error", "code": "exception", "details": {"text": text}}])
        return FhirResponse(body, status_code=500)
    headers = {"Expires": _http_date(job.expires_at)} if job.expires_at else {}
    status_url = f"{_base(request)}/{STATUS_PATH}/{job.public_id}"
    return JSONResponse(jobs.manifest(job, status_url=status_url), headers=headers)


@router.delete(f"/{STATUS_PATH}/{{job_id}}", status_code=202, responses={202: {"description": "cancelled"}})
async def cancel_export(rt: RuntimeDep, caller: FhirCallerDep, job_id: str) -> FhirResponse:
    """Cancel an export (running or complete): its files are deleted and its status URL is 404 from now on."""
    await jobs.cancel(rt, caller, job_id)
    message = _(N_("The export is cancelled and its files are deleted."))
    body = fhir_mapping.outcome([{"severity": "information", "code": "informational", "details": {"text": message}}])
    return FhirResponse(body, status_code=202)


@router.get(
    f"/{STATUS_PATH}/{{job_id}}/{{file_name}}",
    responses={200: {"description": "NDJSON", "content": {bulk_rules.NDJSON: {"schema": {"type": "string"}}}}},
)
async def export_file(rt: RuntimeDep, caller: FhirCallerDep, job_id: str, file_name: str) -> Response:
    """One file of a complete export, streamed from storage (``application/fhir+ndjson``): one resource a line."""
    path = await jobs.file(rt, caller, job_id, file_name)
    headers = {"Cache-Control": "private, no-store", "X-Content-Type-Options": "nosniff"}
    return FileResponse(path, media_type=bulk_rules.NDJSON, headers=headers)


@router.get("/Group/{group_id}")
async def read_group(rt: RuntimeDep, caller: FhirCallerDep, group_id: str) -> FhirResponse:
    """A doctor's panel (the Group's id is the doctor's): the patients with appointments with them."""
    return FhirResponse(await groups.read(rt, caller, _group_id(group_id)))


@router.get("/Group")
async def search_groups(rt: RuntimeDep, caller: FhirCallerDep, request: Request) -> FhirResponse:
    """The panels the caller may see (a doctor their own), by ``_id``."""
    search = Search(_base(request), "Group", list(request.query_params.multi_items()))
    return FhirResponse(await groups.search(rt, caller, search))


def _http_date(moment: datetime) -> str:
    return format_datetime(moment, usegmt=True)
