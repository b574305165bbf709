"""The one rule for a name (domain/names.py): nothing invisible, no bidirectional control, the joiners scripts
need allowed, and the API description's pattern saying exactly the same."""

from __future__ import annotations

import re
import sys
import unicodedata

import pytest

from doctordesk.domain import names
from doctordesk.domain.names import BIDI_CONTROLS, NAME_PATTERN, OPTIONAL_NAME_PATTERN, name_problem, shown
from doctordesk.domain.transfer.import_rows import Kind, check_row

INVISIBLE = sorted(BIDI_CONTROLS) + ["\u200b", "\u2060", "\ufeff", "\u00ad", "\u3164", "\u0000", "\u2028", "\U000e0041"]


@pytest.mark.parametrize("char", INVISIBLE, ids=lambda c: f"U+{ord(c):04X}")
def test_a_name_with_a_bidirectional_control_or_another_invisible_character_is_refused(char):
    problem = name_problem(f"Dr. A{char}regreB", max_chars=128)
    assert problem is not None and f"U+{ord(char):04X}" in problem
    assert not re.match(NAME_PATTERN, f"Dr. A{char}regreB")
    assert not check_row(Kind.PATIENTS, 2, {"external_id": "P", "name": f"A{char}B"}).ok


@pytest.mark.parametrize(
    "value", ["Dr. Berger", "Maria Schmidt-Özdemir", "محمد\u200cرضا", "👩\u200d⚕️ Dr. Chen", "ד״ר כהן", "Zoë 李"]
)
def test_names_in_any_script_with_the_joiners_they_need_are_accepted(value):
    assert name_problem(value, max_chars=128) is None
    assert re.match(NAME_PATTERN, value)
    assert check_row(Kind.PATIENTS, 2, {"external_id": "P", "name": value}).ok


@pytest.mark.parametrize("value", ["", "   ", "\u3000", "x" * 129])
def test_a_blank_or_too_long_name_is_refused(value):
    assert name_problem(value, max_chars=128) is not None


# Every character that shows nothing by its category (spaces of every kind, format characters, marks alone,
# variation selectors), the Hangul fillers and the Braille blank.
SHOWS_NOTHING = ["\u2800", "\u200d", "\u200c\u200d", "\u3000", "\u00a0\u2800", "\u0301", "\ufe0f", "\u180e"]


@pytest.mark.parametrize("value", SHOWS_NOTHING, ids=lambda v: "+".join(f"U+{ord(c):04X}" for c in v))
def test_a_name_that_shows_no_character_is_refused_whatever_invisible_characters_it_uses(value):
    assert name_problem(value, max_chars=128) is not None
    assert not re.match(NAME_PATTERN, value)
    assert not check_row(Kind.PATIENTS, 2, {"external_id": "P", "name": value}).ok


def test_one_character_that_shows_is_enough_and_the_braille_blank_is_allowed_beside_it():
    for value in ["\u2800A", "\u200dX\u200d", "\u2801\u2800\u2803", "\ue000"]:
        assert name_problem(value, max_chars=128) is None, value
        assert re.match(NAME_PATTERN, value)


def test_the_api_descriptions_pattern_needs_exactly_what_the_rule_needs():
    # Each character alone: the pattern matches exactly when the rule accepts it as a whole name.
    pattern = re.compile(NAME_PATTERN)
    for point in range(sys.maxunicode + 1):
        char = chr(point)
        if unicodedata.category(char) == "Cs":
            continue
        accepted = name_problem(char, max_chars=1) is None
        assert bool(pattern.match(char)) == accepted, f"U+{point:04X} {unicodedata.category(char)}"


def test_free_text_in_an_import_may_hold_bidirectional_controls_like_everywhere_else():
    row = {"external_id": "I-1", "patient": "P", "insurer": "AOK", "policy_number": "1"}
    row |= {"valid_from": "2026-01-01", "valid_to": "2026-12-31", "third_party_data": "شركة \u202bالتأمين\u202c\n"}
    assert check_row(Kind.POLICIES, 2, row).ok


def test_the_api_descriptions_pattern_refuses_exactly_what_the_rule_refuses():
    # The pattern is built from the planes where Unicode puts controls and format characters: check them all.
    pattern = re.compile(f"[{names.REFUSED_CLASS}]")
    for point in range(sys.maxunicode + 1):
        char = chr(point)
        if unicodedata.category(char) == "Cs":  # no UTF-8 text holds a lone surrogate: refused, but not stated
            assert names.is_refused(char)
            continue
        assert bool(pattern.match(char)) == names.is_refused(char), f"U+{point:04X} {unicodedata.category(char)}"


def test_an_optional_name_may_be_empty_but_not_invisible():
    assert re.match(OPTIONAL_NAME_PATTERN, "") and not re.match(OPTIONAL_NAME_PATTERN, "\u202e")


def test_a_refused_character_is_shown_as_an_escape():
    assert shown("na\u202eme\x1b[2J") == "na\\u202eme\\x1b[2J"
