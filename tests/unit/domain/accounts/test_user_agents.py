"""A session's device as the security page names it, from the sign-in's User-Agent (docs/accounts.md#security-page):
the client's and the system's names kept apart, each one printable line of at most 120 characters, nothing when
neither is known; the header cut at 512 characters. Put into words where it is shown: "{client} on {system}" (a
text for the catalog), the known name alone, a description stored whole as it is."""

from __future__ import annotations

import pytest

from doctordesk.domain.accounts.user_agents import (
    MAX_DEVICE_CHARS,
    MAX_HEADER_CHARS,
    SessionDevice,
    describe,
    device,
    in_words,
)
from doctordesk.domain.texts import Text
from tests.support.user_agents import CHROME_ANDROID, FIREFOX_WINDOWS, SAFARI_IPHONE


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (FIREFOX_WINDOWS, SessionDevice("Firefox", "Windows")),
        (CHROME_ANDROID, SessionDevice("Chrome Mobile", "Android")),
        (SAFARI_IPHONE, SessionDevice("Mobile Safari", "iOS")),
        ("curl/8.5.0", SessionDevice("curl", None)),  # no system: the client alone
        ("Mozilla/5.0 (Windows NT 10.0)", SessionDevice(None, "Windows")),  # no client: the system alone
        ("python-httpx/0.28.1", None),
        ("something nobody knows", None),
        ("", None),
        (None, None),
    ],
)
def test_a_header_is_named_by_its_known_parts(header, expected):
    assert describe(header) == expected


def test_a_long_header_is_cut_before_it_is_parsed():
    # The browser's token lies past the cut: only the system before it is read.
    header = "Mozilla/5.0 (Windows NT 10.0; " + "x" * MAX_HEADER_CHARS + ") Gecko/20100101 Firefox/133.0"
    assert describe(header) == SessionDevice(None, "Windows")
    assert describe(header[:MAX_HEADER_CHARS]) == SessionDevice(None, "Windows")
    padded = FIREFOX_WINDOWS + " " * (MAX_HEADER_CHARS - len(FIREFOX_WINDOWS))
    assert describe(padded) == SessionDevice("Firefox", "Windows")


def test_a_client_named_after_its_header_is_named_so():
    assert describe("Mozilla/5.0 (compatible; Examplebot/1.0; +http://example.com)") == SessionDevice(
        "Examplebot", None
    )


@pytest.mark.parametrize(
    ("client", "system", "expected"),
    [
        ("Firefox", "Windows", SessionDevice("Firefox", "Windows")),
        ("Firefox", None, SessionDevice("Firefox", None)),
        (None, "Linux", SessionDevice(None, "Linux")),
        ("Other", "Other", None),  # what the rules call the unknown
        ("Other", "iOS", SessionDevice(None, "iOS")),
        ("  ", None, None),
        ("Bad\tname\x00 here", "Win\ndows", SessionDevice("Bad name here", "Win dows")),
        ("A" * 200, "Windows", SessionDevice("A" * MAX_DEVICE_CHARS, "Windows")),
        ("A" * 119 + " B", "Windows", SessionDevice("A" * 119, "Windows")),  # no trailing space after the cut
    ],
)
def test_each_name_is_one_printable_line_of_at_most_120_characters(client, system, expected):
    assert device(client, system) == expected


def test_a_client_on_a_system_is_a_text_for_the_catalog_with_the_names_as_values():
    words = in_words(SessionDevice("Firefox", "Windows"))
    assert isinstance(words, Text)
    assert words == "Firefox on Windows"
    assert words.msgid == "{client} on {system}"
    assert words.params == {"client": "Firefox", "system": "Windows"}


@pytest.mark.parametrize(
    ("known", "expected"),
    [
        (SessionDevice("curl", None), "curl"),
        (SessionDevice(None, "Windows"), "Windows"),
        (SessionDevice(whole="Firefox on Windows"), "Firefox on Windows"),  # stored in one piece before: as it is
        (SessionDevice(), None),
        (None, None),
    ],
)
def test_a_name_alone_or_a_description_stored_whole_is_no_text_for_the_catalog(known, expected):
    words = in_words(known)
    assert words == expected
    assert not isinstance(words, Text)


def test_the_names_win_over_a_description_stored_whole():
    assert in_words(SessionDevice("Firefox", "Windows", "Chrome on Linux")) == "Firefox on Windows"
