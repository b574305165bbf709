"""The German catalog covers every text the code marks, keeps each text's placeholders, and the translation
function uses it."""

from __future__ import annotations

import ast
import functools
import re
from datetime import UTC, datetime

import pytest

from doctordesk import i18n
from doctordesk.domain.texts import Text
from doctordesk.i18n import catalog
from doctordesk.i18n.formats import format_local, money

PLACEHOLDER = re.compile(r"\{(\w*)\}")


@functools.cache
def marked() -> dict[str, list[tuple[str, int]]]:
    """The texts the code marks (Babel reads every source file: once for this module)."""
    return catalog.extract()


def test_every_marked_text_has_a_german_translation() -> None:
    german = catalog.load("de")
    missing = [msgid for msgid in marked() if not (german.get(msgid) and german.get(msgid).string)]
    assert missing == [], f"{len(missing)} texts lack German (run python -m doctordesk.i18n.catalog): {missing}"


def test_no_german_translation_is_fuzzy_or_left_over() -> None:
    german = catalog.load("de")
    marked_texts = set(marked())
    fuzzy = [m.id for m in german if m.id and m.fuzzy]
    stale = [m.id for m in german if m.id and m.id not in marked_texts]
    assert (fuzzy, stale) == ([], [])


def test_translations_keep_the_placeholders_of_their_english_text() -> None:
    for message in catalog.load("de"):
        if message.id and message.string:
            assert sorted(PLACEHOLDER.findall(message.string)) == sorted(PLACEHOLDER.findall(message.id)), message.id


def test_the_extractor_finds_texts_of_every_marker() -> None:
    found = marked()
    # _() in a screen, N_() in the rules, Text() with values, t(locale, ...) in the shell's list.
    for msgid in ("Approve", "Enter a reason.", "Overlaps alternative {n}.", "Sign in"):
        assert msgid in found


def test_translation_follows_the_current_locale_and_fills_values() -> None:
    i18n.use("de")
    try:
        assert i18n._("Approve") == "Zusagen"
        assert i18n._("Alternative {n}", n=2) == "Alternative 2"
        assert i18n._(Text("Overlaps alternative {n}.", n=1)) == "Überschneidet sich mit Alternative 1."
    finally:
        i18n.use("en")
    assert i18n._("Approve") == "Approve"
    assert i18n.t("de", "Decline") == "Ablehnen"


def test_a_text_from_the_rules_is_english_until_it_is_shown() -> None:
    text = Text("Overlaps alternative {n}.", n=3)
    assert text == "Overlaps alternative 3." and isinstance(text, str)
    german = "Überschneidet sich mit Alternative 3."
    assert i18n.in_every_locale(text) == {"en": "Overlaps alternative 3.", "de": german}


def test_an_unknown_text_stays_as_it_is() -> None:
    assert i18n.t("de", "Dr. Weber") == "Dr. Weber"


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, "en"),
        ("", "en"),
        ("de-DE,de;q=0.9,en;q=0.8", "de"),
        ("en-GB,en;q=0.9,de;q=0.8", "en"),
        ("fr-FR, de;q=0.5", "de"),
        ("en;q=0.2, de;q=0.7", "de"),
        ("de;q=0, en", "en"),
        ("fr, it", "en"),
        ("de;q=abc", "en"),
    ],
)
def test_accept_language_picks_the_best_offered_language(header: str | None, expected: str) -> None:
    assert i18n.negotiate(header) == expected


def test_dates_and_money_in_the_clinic_formats() -> None:
    moment = datetime(2026, 11, 23, 8, 30, tzinfo=UTC)
    assert format_local(moment, "Europe/Berlin", "en") == "Mon 23 Nov 2026, 09:30 CET"
    assert format_local(moment, "Europe/Berlin", "de") == "Mo., 23. Nov. 2026, 09:30 MEZ"
    assert format_local(moment, "Europe/London", "en") == "Mon 23 Nov 2026, 08:30 GMT"
    assert format_local(moment, "Europe/London", "de") == "Mo., 23. Nov. 2026, 08:30 GMT"
    assert format_local(datetime(2026, 7, 1, 8, 30, tzinfo=UTC), "Europe/London", "de").endswith("09:30 BST")
    assert money(6000, "EUR", "en") == "€60.00"
    assert money(6000, "EUR", "de") == "60,00\u00a0€"
    assert money(123456, "GBP", "de") == "1.234,56\u00a0£"


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, "en"),
        ({"LANG": "de_DE.UTF-8"}, "de"),
        ({"LANG": "C.UTF-8"}, "en"),
        ({"LC_ALL": "en_GB.UTF-8", "LANG": "de_DE.UTF-8"}, "en"),
        ({"LANGUAGE": "fr:de", "LANG": "en_GB.UTF-8"}, "de"),
        ({"LANGUAGE": "fr", "LC_MESSAGES": "de_AT@euro"}, "de"),
        ({"LANG": "POSIX"}, "en"),
    ],
)
def test_a_terminals_language_is_read_the_way_gettext_reads_it(environ: dict[str, str], expected: str) -> None:
    assert i18n.from_environment(environ) == expected


def test_a_stored_text_is_translated_only_when_it_kept_its_template() -> None:
    i18n.use("de")
    try:
        assert i18n.stored(Text("Saved.")) == "Gespeichert."
        assert i18n.stored("Saved.") == "Saved."  # typed by a person, or stored before templates: as it is
        assert i18n.stored(None) is None
    finally:
        i18n.use("en")


# The FHIR interface's own texts (docs/fhir.md#errors): every message of an error it raises is marked, so an
# OperationOutcome is written in the request's language.
FHIR_PACKAGES = ("services/fhir", "domain/fhir", "web/routers/fhir")
_ERROR_CALLS = {
    "NotSupported", "ValidationFailed", "NotFound", "Forbidden", "Unprocessable", "VersionMismatch", "Gone",
    "Conflict", "IdempotencyKeyReused", "PayloadTooLarge", "issue",
}  # fmt: skip


def _call_name(node: ast.expr) -> str | None:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def _messages(call: ast.Call) -> list[ast.expr]:
    """The expressions a call gives as people's texts: the message and the values of ``fields``."""
    found = list(call.args[1:2] if _call_name(call.func) == "issue" else call.args[:1])
    for keyword in call.keywords:
        if keyword.arg == "message":
            found.append(keyword.value)
        elif keyword.arg == "fields" and isinstance(keyword.value, ast.Dict):
            found.extend(v for v in keyword.value.values if v is not None)
        elif keyword.arg == "fields" and isinstance(keyword.value, ast.DictComp):
            found.append(keyword.value.value)
        elif keyword.arg == "fields" and isinstance(keyword.value, ast.Call) and keyword.value.args[1:2]:
            found.append(keyword.value.args[1])  # dict.fromkeys(names, text)
    return found


def test_every_text_the_fhir_interface_raises_is_marked_for_translation() -> None:
    unmarked = []
    for package in FHIR_PACKAGES:
        for path in sorted((catalog.SOURCE / package).glob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Call) and _call_name(node.func) in _ERROR_CALLS:
                    for text in _messages(node):
                        literal = isinstance(text, ast.Constant) and isinstance(text.value, str)
                        if literal or isinstance(text, ast.JoinedStr):
                            unmarked.append(f"{path.name}:{text.lineno}")
    assert unmarked == []


def test_every_fhir_message_has_a_german_translation() -> None:
    german = catalog.load("de")
    fhir_ids = {m for m, places in marked().items() if any(f.startswith(FHIR_PACKAGES) for f, _ in places)}
    assert len(fhir_ids) > 100  # the interface's own texts, not only the rules'
    missing = sorted(m for m in fhir_ids if not (german.get(m) and german.get(m).string))
    assert missing == []
