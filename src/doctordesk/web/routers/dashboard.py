"""The dashboard screens (docs/dashboard.md): the admin's at ``/profile/admin/dashboard`` (the whole clinic, or one
doctor through ``?doctor=``) and a doctor's own at ``/profile/dashboard``, each metric's CSV beside them. Anyone
else gets 404, as for any screen that is not theirs."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from fastapi.responses import Response

from doctordesk.domain.inputs import MAX_ID
from doctordesk.screens.viewing import Viewing
from doctordesk.services.dashboard import screen as dashboard_screen
from doctordesk.services.dashboard.registry import METRICS
from doctordesk.web.deps import ActorDep, FormDep, RuntimeDep, ScreenRequest, ScreenRequestDep
from doctordesk.web.params import STRICT_ID
from doctordesk.web.responses import SCREEN_RESPONSES, SUBMIT_RESPONSES
from doctordesk.web.screen_routes import Route, screen_routes

router = APIRouter(prefix="/profile", tags=["dashboard"])

DoctorQ = Annotated[
    int | None, Query(ge=1, le=MAX_ID, description="Only this doctor's figures; absent: the whole clinic"), STRICT_ID
]
MetricKey = Annotated[
    str,
    Path(description="The metric (docs/dashboard.md)", json_schema_extra={"enum": [m.key for m in METRICS]}),
]
CSV: dict[int | str, dict[str, Any]] = {200: {"content": {"text/csv": {}}, "description": "The metric's figure as CSV"}}


def _csv(name: str, body: bytes) -> Response:
    return Response(
        body,
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}"', "Cache-Control": "no-store"},
    )


# --- the admin's -----------------------------------------------------------------------------------------------


def _admin(screen: ScreenRequest, doctor: int | None) -> Viewing:
    return screen.viewing(dashboard_screen.admin_page, doctor)


screen_routes(
    router,
    "/admin/dashboard",
    _admin,
    page=Route("admin_dashboard_page", "The clinic's dashboard: the last 90 days as charts, tables and CSV."),
    poll=Route("admin_dashboard_poll", "The clinic dashboard's poll."),
    params={"doctor": (DoctorQ, None)},
)


@router.patch("/admin/dashboard/choose", responses=SUBMIT_RESPONSES)
async def admin_dashboard_choose(screen: ScreenRequestDep, form: FormDep) -> dict[str, Any]:
    """Another doctor (``doctor``; empty: the whole clinic): navigates to that dashboard."""
    return dashboard_screen.choose(screen.rt, screen.actor, form).to_json()


@router.get("/admin/dashboard/export/{metric}", response_class=Response, responses={**SCREEN_RESPONSES, **CSV})
async def admin_dashboard_export(
    rt: RuntimeDep, actor: ActorDep, metric: MetricKey, doctor: DoctorQ = None
) -> Response:
    """One metric's figure of the clinic (or of ``doctor``) as CSV, as its chart shows it."""
    return _csv(*await dashboard_screen.export(rt, actor, metric, doctor_id=doctor, admin=True))


# --- a doctor's own ----------------------------------------------------------------------------------------------


def _own(screen: ScreenRequest) -> Viewing:
    return screen.viewing(dashboard_screen.doctor_page)


screen_routes(
    router,
    "/dashboard",
    _own,
    page=Route("dashboard_page", "A doctor's own dashboard: their last 90 days as charts, tables and CSV."),
    poll=Route("dashboard_poll", "The doctor's dashboard's poll."),
)


@router.get("/dashboard/export/{metric}", response_class=Response, responses={**SCREEN_RESPONSES, **CSV})
async def dashboard_export(rt: RuntimeDep, actor: ActorDep, metric: MetricKey) -> Response:
    """One metric's figure of the doctor's own as CSV."""
    return _csv(*await dashboard_screen.export(rt, actor, metric, doctor_id=None, admin=False))
