"""A session's device on the security page is written in the reader's language when the page is
(docs/accounts.md#which-device-a-session-is): the names as they are, the words between them translated, at most 120
characters in either language."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from doctordesk import i18n
from doctordesk.domain.accounts.user_agents import MAX_DEVICE_CHARS, SessionDevice
from doctordesk.screens.security import device_text


@pytest.fixture
def german() -> Iterator[None]:
    i18n.use("de")
    try:
        yield
    finally:
        i18n.use("en")


@pytest.mark.parametrize(
    ("known", "english", "german_text"),
    [
        (SessionDevice("Firefox", "Windows"), "Firefox on Windows", "Firefox unter Windows"),
        (SessionDevice("Chrome Mobile", "Android"), "Chrome Mobile on Android", "Chrome Mobile unter Android"),
        (SessionDevice("curl", None), "curl", "curl"),
        (SessionDevice(None, "Windows"), "Windows", "Windows"),
        (None, "Unknown device", "Unbekanntes Gerät"),
    ],
)
def test_a_device_reads_in_english_and_in_german(known, english, german_text):
    assert device_text(known) == english
    i18n.use("de")
    try:
        assert device_text(known) == german_text
    finally:
        i18n.use("en")


def test_a_description_stored_whole_before_the_names_were_kept_apart_is_shown_as_it_is(german):
    assert device_text(SessionDevice(whole="Firefox on Linux")) == "Firefox on Linux"


def test_a_name_that_looks_like_a_text_for_the_catalog_is_not_translated(german):
    # A client's name comes from a header: it never goes through the catalog.
    assert device_text(SessionDevice("Unknown device", None)) == "Unknown device"


@pytest.mark.parametrize("language", ["en", "de"])
def test_a_long_description_is_cut_to_120_characters_in_either_language(language):
    i18n.use(language)
    try:
        text = device_text(SessionDevice("A" * 118, "Windows"))
    finally:
        i18n.use("en")
    assert len(text) <= MAX_DEVICE_CHARS
    assert text.startswith("A" * 118) and not text.endswith(" ")
