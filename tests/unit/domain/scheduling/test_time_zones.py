"""The one list of time zones: every zone it lists is accepted and loads, nothing else is accepted.

The API description lists these zones wherever one is chosen; the conformance run sends a sample of them
(tests/e2e/conformance/hooks.py), so this is where each one is checked.
"""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest

from doctordesk.domain.scheduling.suggestions import TIMEZONES, is_timezone, timezone_names


def test_every_listed_zone_is_accepted_and_loads() -> None:
    assert len(TIMEZONES) > 300
    for name in TIMEZONES:
        assert is_timezone(name), name
        assert ZoneInfo(name).key == name


def test_the_selector_offers_only_listed_zones() -> None:
    offered = timezone_names()
    assert "Europe/Berlin" in offered
    assert set(offered) <= set(TIMEZONES)


@pytest.mark.parametrize("name", ["", "europe/berlin", "Europe/Berlin ", "Mars/Olympus", "../etc/passwd", "+01:00"])
def test_a_name_outside_the_list_is_refused(name: str) -> None:
    assert not is_timezone(name)
