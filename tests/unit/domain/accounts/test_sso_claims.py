"""A new single sign-on user's display name follows the one name rule: a provider's name that shows nothing or
hides a control falls back to the username."""

from __future__ import annotations

import pytest

from doctordesk.domain.accounts.sso_claims import display_name


@pytest.mark.parametrize("name", ["\u2800", "\u200d", "\u200c\u200d", "  \u3000 ", "Dr. A\u202eregreB", "", 7])
def test_a_providers_name_that_cannot_be_shown_falls_back_to_the_username(name):
    assert display_name({"name": name}, "jdoe") == "jdoe"


def test_a_providers_readable_name_is_kept_without_the_space_around_it():
    assert display_name({"name": "  Zoë 李  "}, "jdoe") == "Zoë 李"
    assert display_name({}, "jdoe") == "jdoe"
