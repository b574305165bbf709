"""What a dashboard metric is: a key (element ids ``chart-{key}``, the CSV's name ``{key}.csv``), its title and
description (``N_`` texts), how its chart is drawn, the columns drawn, and the query that computes its figure for a
scope (a service's function: the domain only names its shape)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from doctordesk.domain.dashboard.figures import Figure
from doctordesk.domain.dashboard.window import Window
from doctordesk.domain.scheduling.suggestions import Hours, HoursException

ChartKind = Literal["bar", "line", "hbar"]


@dataclass(frozen=True, slots=True)
class Scope:
    """Whose figures: one doctor's (``doctor_id``) or the whole clinic's (None), over ``window``, with the clinic's
    reference data the figures need (the doctors shown by name, their hours and exceptions)."""

    window: Window
    doctor_id: int | None
    doctors: Mapping[int, str]  # the doctors the figures cover, id → name, in the order shown
    work_hours: Mapping[tuple[int, int], Sequence[Hours]]
    exceptions: Mapping[int, Sequence[HoursException]]
    cancel_hours: int  # DOCTORDESK_PATIENT_CANCEL_HOURS: a patient's cancel after it is late


Compute = Callable[[Any, Scope], Awaitable[Figure]]  # (a database session, the scope) → the figure


@dataclass(frozen=True, slots=True)
class Metric:
    key: str
    title: str  # N_
    description: str  # N_: what the chart shows and how it is counted, read out as the chart's description
    chart: ChartKind
    compute: Compute
    series: tuple[str, ...] = ()  # the figure's columns drawn (all when empty)
