"""``_sort`` as the FHIR searches read it (docs/fhir.md#sorting): the keys offered, descending with ``-``, the id
breaking ties in the last key's direction, missing values last, and cursors bound to their sort."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from doctordesk.domain.errors import ValidationFailed
from doctordesk.services.fhir import sorting
from doctordesk.services.fhir.sorting import SortKey

OFFERED = ("_id", "date", "status", "birthdate")


def test_a_sort_value_splits_into_keys_offered_and_the_rest():
    keys, rest = sorting.parse("status,-date,foo,-status,,-bar", OFFERED)
    assert keys == (SortKey("status"), SortKey("date", descending=True))
    assert rest == ["foo", "-bar"]
    assert sorting.sort_text(keys) == "status,-date"


def test_rows_sort_by_every_key_then_the_id_and_pages_continue_after_the_cursor():
    sort = (SortKey("status"), SortKey("birthdate", descending=True))
    rows = [
        ("booked", date(1990, 1, 1), 3),
        ("booked", None, 1),
        ("booked", date(1990, 1, 1), 2),
        ("arrived", date(1950, 1, 1), 9),
        ("booked", date(2000, 1, 1), 5),
    ]
    ordered = sorting.page_in_memory(sort, rows, lambda r: r, None, 10)
    # missing sorts after every value, so first when descending; ties by id in the last key's direction
    assert [r[2] for r in ordered] == [9, 1, 5, 3, 2]
    rest = sorting.page_in_memory(sort, rows, lambda r: r, ordered[1], 10)
    assert rest == ordered[2:]


def test_a_cursor_holds_its_values_and_is_refused_under_another_sort_or_edited():
    sort = (SortKey("date"), SortKey("status", descending=True))
    values = (datetime(2026, 11, 23, 7, 30, tzinfo=UTC), "booked", 42)
    cursor = sorting.encode_cursor(sort, values)
    assert sorting.decode_cursor(sort, cursor) == values
    with pytest.raises(ValidationFailed):
        sorting.decode_cursor((SortKey("date"),), cursor)
    with pytest.raises(ValidationFailed):
        sorting.decode_cursor(sort, cursor[:-1] + ("A" if cursor[-1] != "A" else "B"))
    days = (SortKey("birthdate"),)
    assert sorting.decode_cursor(days, sorting.encode_cursor(days, (None, "7-1-202611230700"))) == (
        None,
        "7-1-202611230700",
    )
