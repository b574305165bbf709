"""The clinic dashboard (docs/dashboard.md): for an admin the whole clinic's figures, or one doctor's through the
filter, under the administration's navigation; for a doctor their own. Each metric is a ``Chart``: a pygal SVG, the
figure's table (for screen readers, and for anyone who wants the numbers) and its CSV as a download. Numbers, days
and weeks are written in the reader's language."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from babel.dates import format_date
from babel.numbers import format_decimal

from doctordesk.domain.dashboard.figures import Column, Figure
from doctordesk.domain.dashboard.metric import ChartKind, Metric
from doctordesk.domain.dashboard.window import Window
from doctordesk.i18n import _
from doctordesk.i18n.formats import clinic_locale, format_day
from doctordesk.i18n.locale import current
from doctordesk.screens import charts
from doctordesk.screens.admin.pages import BASE, nav
from doctordesk.screens.protocol import Action, Element, Layout, Option, Page, el

ADMIN_SCREEN = "admin-dashboard"
ADMIN_ENDPOINT = f"{BASE}/dashboard"
DOCTOR_SCREEN = "dashboard"
DOCTOR_ENDPOINT = "/profile/dashboard"
NO_VALUE = "—"
_SHORT_DAY = {"en": "d MMM", "de": "d. MMM"}
_LONG_DAY = {"en": "EEE d MMM y", "de": "EEE, d. MMM y"}


@dataclass(frozen=True, slots=True)
class Board:
    """What the page shows: the window, each metric with its figure, and for an admin the doctor filter."""

    window: Window
    figures: Sequence[tuple[Metric, Figure]]
    doctor_id: int | None = None
    doctors: Sequence[Option] = ()
    admin: bool = True


def export_href(board: Board, metric: Metric) -> str:
    if not board.admin:
        return f"{DOCTOR_ENDPOINT}/export/{metric.key}"
    suffix = f"?doctor={board.doctor_id}" if board.doctor_id is not None else ""
    return f"{ADMIN_ENDPOINT}/export/{metric.key}{suffix}"


def number(value: float | int | None, unit: str = "count", *, language: str | None = None) -> str:
    """A value as the reader writes it: ``1,234.5`` / ``1.234,5``, percentages with their sign; no value: a dash."""
    if value is None:
        return NO_VALUE
    text = format_decimal(value, format="#,##0.#", locale=clinic_locale(language))
    return _("{number} %", number=text) if unit == "percent" else text


def row_label(figure: Figure, key: date | str, *, short: bool = False) -> str:
    """A row's first cell: a day, a week (by its Monday) or a name as it is."""
    if isinstance(key, str):
        return key
    patterns = _SHORT_DAY if short else _LONG_DAY
    day = format_date(key, patterns.get(current(), patterns["en"]), locale=clinic_locale())
    return _("Week of {day}", day=day) if figure.kind == "week" and not short else day


def first_header(figure: Figure) -> str:
    return {"day": _("Day"), "week": _("Week"), "text": _("Doctor")}[figure.kind]


def _columns(metric: Metric, figure: Figure) -> list[tuple[int, Column]]:
    return [(i, c) for i, c in enumerate(figure.columns) if not metric.series or c.key in metric.series]


def chart(board: Board, metric: Metric, figure: Figure) -> Element:
    """One metric as a ``Chart`` (docs/protocol.md#chart): the picture, its table and its CSV."""
    title, description = _(metric.title), _(metric.description)
    drawn = _columns(metric, figure)
    empty = not figure.rows or all(r.values[i] is None for r in figure.rows for i, _c in drawn)
    picture = _picture(
        metric.chart,
        title,
        description,
        tuple(row_label(figure, r.key, short=True) for r in figure.rows),
        tuple((_(c.label), tuple(_plain(r.values[i]) for r in figure.rows)) for i, c in drawn),
        current(),
    )
    table = {
        "columns": [first_header(figure), *(_(c.label) for c in figure.columns)],
        "rows": [[row_label(figure, r.key), *(number(v, c.unit) for v, c in zip(r.values, figure.columns, strict=True))]
                 for r in figure.rows],
    }  # fmt: skip
    csv = el(f"csv-{metric.key}", "Attachment", label=f"{metric.key}.csv",
             props={"href": export_href(board, metric), "mime": "text/csv"})  # fmt: skip
    return el(
        f"chart-{metric.key}",
        "Chart",
        csv,
        label=title,
        value=picture,
        props={"description": description, "empty": empty, **table, "table_label": _("Table: {title}", title=title)},
    )


# Drawing takes pygal tens of milliseconds per chart: the same figure in the same language (every admin within
# the hold, every poll that must render, a page drawn again after an unrelated change) is drawn once.
@functools.lru_cache(maxsize=256)
def _picture(
    kind: ChartKind,
    title: str,
    description: str,
    labels: tuple[str, ...],
    series: tuple[tuple[str, tuple[float | None, ...]], ...],
    language: str,
) -> str:
    return charts.data_url(
        charts.svg(kind, title=title, description=description, labels=labels, series=series,
                   number=lambda v: number(v, language=language), no_data=_("No data"))
    )  # fmt: skip


def _plain(value: float | int | None) -> float | None:
    return None if value is None else float(value)


def _filter(board: Board) -> Element:
    options = [Option("", _("Whole clinic")), *board.doctors]
    return el(
        "choice",
        "Section",
        el("doctor", "Combo", label=_("Doctor"), name="doctor", value=str(board.doctor_id or ""), options=options,
           action=Action("PATCH", f"{ADMIN_ENDPOINT}/choose", form="choice")),
        label=_("Whose figures"),
    )  # fmt: skip


def _period(w: Window) -> Element:
    return el(
        "period",
        "Caption",
        value=_(
            "The last 90 days: {first} to {last} (time zone {zone}).",
            first=format_day(w.first_day, with_year=True),
            last=format_day(w.today, with_year=True),
            zone=w.zone,
        ),
    )


def render(board: Board, *, layout: Layout, timeout: int) -> Page:
    title = _("Dashboard")
    charts_ = [chart(board, m, f) for m, f in board.figures]
    if board.admin:
        endpoint = ADMIN_ENDPOINT + (f"?doctor={board.doctor_id}" if board.doctor_id is not None else "")
        head: list[Element] = [nav("dashboard"), el("title", "Heading", value=title), _filter(board)]
        screen, poll = ADMIN_SCREEN, ADMIN_ENDPOINT + (f"?doctor={board.doctor_id}" if board.doctor_id else "")
    else:
        endpoint = poll = DOCTOR_ENDPOINT
        head = [
            el("back", "Link", label=_("Appointments"), action=Action("PUT", "/profile/appointments")),
            el("title", "Heading", value=_("Your dashboard")),
        ]
        screen = DOCTOR_SCREEN
    return Page(
        screen=screen,
        title=title,
        endpoint=endpoint,
        poll=poll,
        timeout=timeout,
        elements=(*head, _period(board.window), el("charts", "Group", *charts_, label=_("Charts"))),
        layout=layout,
    )
