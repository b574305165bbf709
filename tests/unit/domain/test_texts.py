"""A text stored for a later reader keeps its template and values: to JSON and back gives the same text, in every
language; what is not such a text reads as nothing (the caller then shows the stored English)."""

from __future__ import annotations

from datetime import UTC, datetime

from doctordesk import i18n
from doctordesk.domain.texts import Moment, Text, from_json, to_json

MOMENT = Moment(datetime(2026, 11, 25, 8, 0, tzinfo=UTC), "Europe/Berlin")


def test_a_text_with_a_word_and_an_instant_survives_json_in_both_languages() -> None:
    text = Text("{patient} accepted the time {when}.", patient="Maria Schmidt", when=MOMENT)
    data = to_json(text)
    assert data == {
        "msgid": "{patient} accepted the time {when}.",
        "params": {
            "patient": "Maria Schmidt",
            "when": {"moment": "2026-11-25T08:00:00+00:00", "timezone": "Europe/Berlin"},
        },
    }
    back = from_json(data)
    assert back == text == "Maria Schmidt accepted the time Wed 25 Nov 2026, 09:00 CET."
    assert i18n.t("de", back) == "Maria Schmidt hat den Termin Mi., 25. Nov. 2026, 09:00 MEZ angenommen."
    assert i18n.t("en", back) == "Maria Schmidt accepted the time Wed 25 Nov 2026, 09:00 CET."


def test_a_nested_text_is_translated_inside_its_sentence() -> None:
    text = Text("This appointment is already {status}.", status=Text("approved"))
    back = from_json(to_json(text))
    assert back is not None and i18n.t("de", back) == "Dieser Termin ist bereits zugesagt."


def test_a_plain_text_is_a_template_without_values() -> None:
    assert to_json("Saved.") == {"msgid": "Saved."}
    assert from_json({"msgid": "Saved."}) == "Saved."


def test_what_is_not_a_stored_text_reads_as_nothing() -> None:
    for data in (None, "text", {"params": {}}, {"msgid": 3}, {"msgid": "{who} left {where}", "params": {"who": "x"}}):
        assert from_json(data) is None


def test_an_instant_in_an_unknown_zone_still_reads() -> None:
    odd = Moment(datetime(2026, 11, 25, 8, 0, tzinfo=UTC), "Mars/Olympus")
    assert f"{odd}" == "2026-11-25T08:00+00:00 (Mars/Olympus)"
    assert i18n.t("de", Text("at {when}", when=odd)) == "at Mi., 25. Nov. 2026, 08:00 UTC"
