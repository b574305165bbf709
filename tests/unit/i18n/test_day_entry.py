"""A day in a form, the clinic's way (docs/web-app.md#dates-in-forms): the pattern Babel gives for each clinic
language, its hint in the reader's letters, and the form's message naming the same hint."""

from __future__ import annotations

from datetime import date

import pytest

from doctordesk.domain.moments import FORM_DAY_MESSAGE
from doctordesk.i18n import t, use
from doctordesk.i18n.day_entry import date_attrs, entry_hint, entry_pattern, format_entry


@pytest.mark.parametrize(
    ("language", "pattern", "hint", "written", "message"),
    [
        ("en", "dd/MM/yyyy", "DD/MM/YYYY", "02/01/2027", "Enter the date as DD/MM/YYYY (or YYYY-MM-DD)."),
        ("de", "dd.MM.yyyy", "TT.MM.JJJJ", "02.01.2027", "Geben Sie das Datum als TT.MM.JJJJ ein (oder JJJJ-MM-TT)."),
    ],
)
def test_each_language_writes_a_day_day_first_with_four_digit_years(language, pattern, hint, written, message):
    use(language)
    try:
        assert entry_pattern() == pattern
        assert entry_hint() == hint
        assert format_entry(date(2027, 1, 2)) == written
        assert date_attrs() == {"placeholder": hint, "props": {"format": pattern, "hint": f"Format: {hint}"}}
        # The refusal names the hint the field shows.
        assert t(language, FORM_DAY_MESSAGE) == message
    finally:
        use("en")


def test_years_before_1000_keep_four_digits():
    assert format_entry(date(999, 12, 31), "de") == "31.12.0999"
