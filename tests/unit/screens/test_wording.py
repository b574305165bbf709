"""Every status has words for every role: a new status without them would break every screen that shows it."""

from __future__ import annotations

import pytest

from doctordesk.domain.appointments.status import Status
from doctordesk.domain.roles import Role
from doctordesk.screens.wording import status_label


@pytest.mark.parametrize("role", list(Role))
@pytest.mark.parametrize("status", list(Status))
def test_every_status_reads_as_words_for_every_role(status, role):
    words = status_label(status, role)
    assert words and words[0].isupper() and words != status.public_name


def test_every_kind_of_fee_rule_has_its_words_in_both_languages():
    from doctordesk import i18n
    from doctordesk.domain.review.fees import SURCHARGES
    from doctordesk.screens.admin.fees import KIND_LABELS

    assert set(KIND_LABELS) == {"doctor_fee", "location_fee", *SURCHARGES}
    assert i18n.t("de", KIND_LABELS["short_notice"]) == "Zuschlag: kurzfristig"


@pytest.mark.parametrize("status", list(Status))
def test_every_status_has_words_for_a_sentence_never_its_api_name(status):
    from doctordesk import i18n

    words = status.in_words
    assert i18n.t("de", words) != words  # German has its own word for each
    assert "pending-response" not in (words, i18n.t("de", words))
    assert i18n.t("de", words) != status.public_name


def test_a_bookable_service_is_shown_by_its_label_another_as_stored():
    from doctordesk import i18n
    from doctordesk.screens.wording import service_words

    i18n.use("de")
    try:
        assert service_words("follow-up") == "Folgetermin"
        assert service_words("physiotherapy") == "physiotherapy"
    finally:
        i18n.use("en")
