"""A session's device as the security page names it, from the sign-in's User-Agent (docs/accounts.md#security-page):
"{browser} on {system}", the known part alone, nothing when neither is known; the header cut at 512 characters, the
description at 120."""

from __future__ import annotations

import pytest

from doctordesk.domain.accounts.user_agents import MAX_DEVICE_CHARS, MAX_HEADER_CHARS, describe, name
from tests.support.user_agents import CHROME_ANDROID, FIREFOX_WINDOWS, SAFARI_IPHONE


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (FIREFOX_WINDOWS, "Firefox on Windows"),
        (CHROME_ANDROID, "Chrome Mobile on Android"),
        (SAFARI_IPHONE, "Mobile Safari on iOS"),
        ("curl/8.5.0", "curl"),  # no system: the client alone
        ("Mozilla/5.0 (Windows NT 10.0)", "Windows"),  # no client: the system alone
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
    assert describe(header) == "Windows"
    assert describe(header[:MAX_HEADER_CHARS]) == "Windows"
    assert describe(FIREFOX_WINDOWS + " " * (MAX_HEADER_CHARS - len(FIREFOX_WINDOWS))) == "Firefox on Windows"


def test_a_client_named_after_its_header_is_named_so():
    assert describe("Mozilla/5.0 (compatible; Examplebot/1.0; +http://example.com)") == "Examplebot"


@pytest.mark.parametrize(
    ("client", "system", "expected"),
    [
        ("Firefox", "Windows", "Firefox on Windows"),
        ("Firefox", None, "Firefox"),
        (None, "Linux", "Linux"),
        ("Other", "Other", None),  # what the rules call the unknown
        ("Other", "iOS", "iOS"),
        ("  ", None, None),
        ("Bad\tname\x00 here", "Win\ndows", "Bad name here on Win dows"),
        ("A" * 200, "Windows", "A" * MAX_DEVICE_CHARS),
        ("A" * 118, "Windows", "A" * 118 + " o"),
        ("A" * 117, "Windows", "A" * 117 + " on"),
    ],
)
def test_a_description_is_one_printable_line_of_at_most_120_characters(client, system, expected):
    assert name(client, system) == expected
