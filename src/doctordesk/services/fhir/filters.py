"""FHIR search parameters as SQL conditions (docs/fhir.md#search): tokens with ``:not`` and ``:missing``, dates
with the eight prefixes, references. Repeated parameters are ANDed (one condition each), commas inside one value
ORed, as R4 says."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import and_, false, not_, or_, true
from sqlalchemy.sql.elements import ColumnElement

from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.fhir import mapping as fhir_mapping
from doctordesk.domain.texts import Text
from doctordesk.services.fhir.search import Checked, missing

Condition = ColumnElement[bool]


def split(raw: str) -> list[str]:
    """One parameter's ORed values (commas; ``\\,`` is not used by any value here)."""
    return [v for v in raw.split(",") if v]


def missing_condition(checked: Checked, name: str, column: Any, *, nullable: bool = True) -> list[Condition]:
    """``name:missing=true|false`` on ``column`` (a column that is never NULL: true finds nothing)."""
    wanted = missing(checked, name)
    if wanted is None:
        return []
    if not nullable:
        return [false() if wanted else true()]
    return [column.is_(None) if wanted else column.is_not(None)]


def token_conditions(
    checked: Checked,
    name: str,
    column: Any,
    read: Callable[[str], Sequence[Any]],
    *,
    nullable: bool = True,
    every: Sequence[Any] = (),
) -> list[Condition]:
    """``name`` (the column is one of the values), ``name:not`` (it is none of them, or empty) and
    ``name:missing``. ``read`` turns one value into the column values it means (ValidationFailed if malformed).
    ``every``: all the values the column can hold, when they are few; ``:not`` then asks for the others by name (an
    index on the column finds them, where "none of" reads every row that has one)."""
    conditions: list[Condition] = []
    for raw in checked.get(name):
        values = [v for value in split(raw) for v in read(value)]
        conditions.append(column.in_(values) if values else false())
    for raw in checked.get(f"{name}:not"):
        values = [v for value in split(raw) for v in read(value)]
        if values:
            others = [v for v in every if v not in values]
            outside = column.in_(others) if every else column.not_in(values)
            conditions.append(or_(column.is_(None), outside) if nullable else outside)
    return conditions + missing_condition(checked, name, column, nullable=nullable)


def date_conditions(checked: Checked, name: str, column: Any, *, nullable: bool = False) -> list[Condition]:
    """``name`` with any of the eight prefixes (``fhir.date_tests``) on an instant column, and ``name:missing``."""
    conditions: list[Condition] = []
    for test in fhir_mapping.date_tests(checked.get(name), name=name, now=checked.now):
        parts: list[Condition] = []
        if test.lo is not None:
            parts.append(column >= test.lo)
        if test.hi is not None:
            parts.append(column < test.hi)
        inside = and_(*parts) if parts else true()
        conditions.append(inside if test.inside else not_(inside))
    return conditions + missing_condition(checked, name, column, nullable=nullable)


def reference_ids(raw: str, name: str, kinds: Sequence[str]) -> list[tuple[str, int]]:
    """The (type, id) pairs one reference value names: ``Type/<id>`` of one of ``kinds``, or a bare id when only
    one kind is possible."""
    out: list[tuple[str, int]] = []
    for value in split(raw):
        kind, slash, _ = value.partition("/")
        if not slash and len(kinds) == 1:
            kind = kinds[0]
        row_id = fhir_mapping.reference_id(value, kind) if kind in kinds else None
        if row_id is None:
            raise ValidationFailed(fields={name: Text("Use {values}.", values=" or ".join(k + "/<id>" for k in kinds))})
        out.append((kind, row_id))
    return out


def reference_conditions(checked: Checked, name: str, kind: str, column: Any) -> list[Condition]:
    """``name`` naming ``kind`` resources (the column holds their id), and ``name:missing``."""
    conditions: list[Condition] = []
    for raw in checked.get(name):
        conditions.append(column.in_([i for _, i in reference_ids(raw, name, (kind,))]))
    return conditions + missing_condition(checked, name, column, nullable=False)
