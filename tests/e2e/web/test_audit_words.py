"""The audit trail in words, in the browser, in English on the desktop and German on a phone
(docs/administration.md#the-audit-trail): every field by its label in the page's language, a change as
"Specialty: Neurology → Cardiology", yes and no in words, a role in words, no JSON, no column names, and the "Who"
filter naming a person's role once."""

from __future__ import annotations

import httpx
import pytest

from tests.e2e.web.conftest import DESKTOP, MOBILE, axe_violations
from tests.e2e.web.test_admin_screens import open_administration

pytestmark = pytest.mark.browser

USERS = "/profile/admin/users"
WORDS = {
    "en": {
        "changed": "Specialty: Neurology → Cardiology",
        "created": ["Role: Doctor", "Can prescribe: yes"],
        "title": "Audit trail",
    },
    "de": {
        "changed": "Fachrichtung: Neurology → Cardiology",
        "created": ["Rolle: Arzt", "Darf verschreiben: ja"],
        "title": "Protokoll",
    },
}


def _doctor_created_and_changed(base_url: str, username: str) -> None:
    """An administrator creates a doctor and then changes their specialty, through the screens' own requests."""
    with httpx.Client(base_url=base_url, timeout=10) as http:
        token = http.post("/auth/login", data={"username": "admin", "password": "demo"}).json()["access_token"]
        headers = {"Authorization": f"Bearer {token}"}
        form = {"role": "doctor", "username": username, "display_name": f"Dr. {username}", "password": "",
                "specialty": "Neurology", "timezone": "Europe/Berlin", "can_prescribe": "true",
                "chat_enabled": "true"}  # fmt: skip
        created = http.post(f"{USERS}/create", headers=headers, data=form)
        assert created.status_code == 200, created.text
        page = http.put(created.json()["navigate"], headers=headers).json()
        saved = http.post(
            f"{created.json()['navigate']}/save",
            headers={**headers, "X-Screen-State": page["state"]},
            data={**form, "specialty": "Cardiology"},
        )
        assert saved.status_code == 200, saved.text


@pytest.mark.parametrize(
    ("locale", "viewport"), [("en-GB", DESKTOP), ("de-DE", MOBILE)], ids=["en-desktop", "de-phone"]
)
def test_the_audit_trail_reads_in_words_in_the_pages_language(server, new_page, locale, viewport):
    language = locale[:2]
    words = WORDS[language]
    _doctor_created_and_changed(server.url, f"drwords{language}")
    page = new_page(server.url, viewport=viewport, locale=locale)
    open_administration(page, language)
    page.locator('[data-id="nav-audit"]').click()
    page.locator("h1", has_text=words["title"]).wait_for()

    details = [t.strip() for t in page.locator('[data-id^="audit-details-"]').all_inner_texts()]
    assert any(words["changed"] in d for d in details), details
    assert any(all(line in d for line in words["created"]) for d in details), details
    everything = "\n".join(details)
    for raw in ("{", "}", "_id", "second_factor", "display_name", "can_prescribe", "true", "false", "previous"):
        assert raw not in everything, raw

    who = page.locator('[data-name="actor"] option').all_inner_texts()
    kim = [o for o in who if o.startswith("Kim Novak")]
    assert kim == ["Kim Novak (Support)"]  # the role once, as the name says it
    assert axe_violations(page) == []
