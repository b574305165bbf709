"""Every status has words for every role: a new status without them would break every screen that shows it."""

from __future__ import annotations

import pytest

from doctordesk.domain.roles import Role
from doctordesk.domain.status import Status
from doctordesk.screens.wording import status_label


@pytest.mark.parametrize("role", list(Role))
@pytest.mark.parametrize("status", list(Status))
def test_every_status_reads_as_words_for_every_role(status, role):
    words = status_label(status, role)
    assert words and words[0].isupper() and words != status.public_name
