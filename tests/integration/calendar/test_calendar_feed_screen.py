"""The calendar feed screen: reached from the doctor's appointment list, it makes, rotates and revokes the address
through the same service as the API, and shows a new address once with its Copy control (SQLite and PostgreSQL)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from tests.support.review import find

SCREEN = "/profile/calendar-feed"


def patch_of(update: dict[str, Any], element_id: str) -> dict[str, Any]:
    """The merged ``set`` of every update patch of one element."""
    merged: dict[str, Any] = {}
    for p in update["patches"]:
        if p["op"] == "update" and p["id"] == element_id:
            merged.update(p["set"])
    return merged


async def test_the_doctors_appointment_list_links_to_the_calendar_feed_and_a_patients_does_not(client, login):
    doctor = await login("doctor1")
    page = (await client.put("/profile/appointments", headers=doctor.headers)).json()
    link = find(page["elements"], "calendar-feed")
    assert link is not None and link["action"] == {"method": "PUT", "endpoint": SCREEN}
    patient = await login("patient1")
    page = (await client.put("/profile/appointments", headers=patient.headers)).json()
    assert find(page["elements"], "calendar-feed") is None


async def test_create_shows_the_address_once_with_a_copy_control_and_the_address_works(client, login):
    doctor = await login("doctor1")
    page = (await client.put(SCREEN, headers=doctor.headers)).json()
    assert find(page["elements"], "make")["label"] == "Create feed address"
    assert find(page["elements"], "revoke")["visible"] is False
    assert find(page["elements"], "feed-new")["visible"] is False

    made = await client.post(SCREEN + "/make", headers={**doctor.headers, "X-Screen-State": page["state"]})
    assert made.status_code == 200, made.text
    update = made.json()
    url = patch_of(update, "feed-url")["value"]
    assert url.startswith("http://testserver/calendar/ddcal_")
    assert patch_of(update, "copy-url")["props"] == {"copy": url}
    assert patch_of(update, "feed-new")["visible"] is True
    assert patch_of(update, "make")["label"] == "Rotate address"
    assert (await client.get(urlsplit(url).path)).status_code == 200

    # Opened again, the screen says a feed is live but never shows the address.
    again = (await client.put(SCREEN, headers=doctor.headers)).json()
    assert url.split("/")[-1].removesuffix(".ics") not in str(again)
    # In the doctor's own zone (Dr. Berger: Berlin; the tests' clock is 07:00 UTC).
    assert find(again["elements"], "feed-status")["value"].startswith("Active since Mon 23 Nov 2026, 08:00 CET")
    assert find(again["elements"], "make")["action"]["confirm"]


async def test_rotate_and_revoke_on_the_screen_make_the_old_address_404(client, login):
    doctor = await login("doctor1")
    page = (await client.put(SCREEN, headers=doctor.headers)).json()
    headers = {**doctor.headers, "X-Screen-State": page["state"]}
    first = patch_of((await client.post(SCREEN + "/make", headers=headers)).json(), "feed-url")["value"]
    rotated = (await client.post(SCREEN + "/make", headers=headers)).json()
    second = patch_of(rotated, "feed-url")["value"]
    assert first != second
    assert (await client.get(urlsplit(first).path)).status_code == 404
    revoked = await client.post(SCREEN + "/revoke", headers={**doctor.headers, "X-Screen-State": rotated["state"]})
    update = revoked.json()
    assert patch_of(update, "feed-new")["visible"] is False
    assert "revoked" in patch_of(update, "feed-notice")["value"]
    assert (await client.get(urlsplit(second).path)).status_code == 404
    after = (await client.put(SCREEN, headers=doctor.headers)).json()
    assert find(after["elements"], "feed-status")["value"] == "No feed address yet."


async def test_the_poll_is_empty_until_the_feed_changes(client, login):
    doctor = await login("doctor1")
    page = (await client.put(SCREEN, headers=doctor.headers)).json()
    headers = {**doctor.headers, "X-Screen-State": page["state"]}
    assert (await client.patch(SCREEN, headers=headers)).json()["patches"] == []
    await client.post("/api/calendar-feed", headers=doctor.headers)
    changed = (await client.patch(SCREEN, headers=headers)).json()
    assert patch_of(changed, "feed-status")["value"].startswith("Active since")
