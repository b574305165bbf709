"""The Review and Approve screen through its endpoints: elements of spec 2.5, cards, highlights, fees, warnings,
acknowledgements, and update sets that bring the client's page to exactly what a fresh PUT shows."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from sqlalchemy import select

from doctordesk.screens.protocol import apply
from doctordesk.store.review_tables import AppointmentOffer, ReviewDraft
from doctordesk.store.tables import AuditLog, Location
from tests.support.review import (
    CHEN_OUT_OF_NETWORK,
    DISCLAIMER,
    NO_TIMEZONE,
    NOT_COVERED,
    PENDING_5,
    PRESCRIPTION,
    REQUESTED,
    THIRD_PARTY_INVALID,
    aid,
    approve_url,
    find,
    open_page,
)


class Screen:
    """A client's view of one screen: applies update sets like the generic client does."""

    def __init__(self, client, headers, appointment_id):
        self.client, self.headers, self.a = client, headers, appointment_id
        self.elements: list = []
        self.state = ""

    async def open(self):
        page = await open_page(self.client, self.headers, self.a)
        self.elements, self.state = page["elements"], page["state"]
        return self

    async def patch(self, suffix="", data=None, expect=200):
        response = await self.client.patch(
            approve_url(self.a) + suffix, headers={**self.headers, "X-Screen-State": self.state}, data=data
        )
        assert response.status_code == expect, response.text
        body = response.json()
        if expect == 200:
            self.elements = apply(self.elements, body["patches"])
            self.state = body["state"] or self.state
        return body

    def __getitem__(self, element_id):
        found = find(self.elements, element_id)
        assert found is not None, f"no element {element_id}"
        return found

    def has(self, element_id):
        return find(self.elements, element_id) is not None

    async def matches_a_fresh_put(self):
        fresh = await open_page(self.client, self.headers, self.a)
        assert self.elements == fresh["elements"]


async def test_the_page_has_the_spec_elements_and_the_metadata_in_the_locations_timezone(client, login, demo):
    doctor = await login("doctor1")
    s = await Screen(client, doctor.headers, aid(demo, REQUESTED)).open()
    for ref in ("another-alternative", "spacer", "approve", "decline", "version", "decline-modal", "reason"):
        assert s.has(ref)
    assert s["approve"]["type"] == "Button" and s["approve"].get("enabled", True) is True
    assert s["another-alternative"]["type"] == "Link" and s["spacer"]["type"] == "Spacer"
    assert s["requested-time"]["value"] == "Wed 25 Nov 2026, 09:00 CET"
    assert s["patient"]["value"] == "Maria Schmidt" and s["version"]["name"] == "version"
    assert s["decline-modal"]["visible"] is False and s["reason"]["name"] == "reason"


async def test_suggest_another_alternative_adds_a_card_with_doctor_and_location_prefilled(client, login, demo):
    doctor = await login("doctor1")
    s = await Screen(client, doctor.headers, aid(demo, REQUESTED)).open()
    await s.patch("/add-alternative")
    card = s["alternative-1"]
    assert card["type"] == "Card"
    assert s["doctor~1"]["type"] == "Combo" and s["doctor~1"]["name"] == "profile~1"
    assert s["doctor~1"]["value"] == str(demo.users["doctor1"])
    assert s["location~1"]["value"] == str(demo.locations["berlin"])
    assert s["date~1"]["type"] == "Date" and s["time~1"]["type"] == "Time"
    assert s["fee-text~1"]["visible"] is False and s["doctor-fee~1"]["visible"] is False
    assert not s.has("delete~1") and not s.has("prescription-info~1")
    assert s["approve"]["enabled"] is False  # the card is incomplete
    assert "error" not in card  # but nothing was typed yet: no error before input
    assert card["label"] == "Alternative 1"
    await s.patch("/change", {"date~1": "2026-11-26"})
    assert s["alternative-1"]["error"] == "Enter a date and time for this alternative."
    await s.patch("/add-alternative")
    assert s["delete~2"]["type"] == "Link"
    await s.matches_a_fresh_put()


async def test_completing_a_card_shows_fees_highlights_changes_and_enables_approve(client, login, demo):
    doctor = await login("doctor1")
    s = await Screen(client, doctor.headers, aid(demo, REQUESTED)).open()
    await s.patch("/add-alternative")
    await s.patch("/change", {"date~1": "2026-11-25", "time~1": "11:00"})
    assert s["time~1"]["highlighted"] is True and s["time~1"]["value"] == "11:00"
    assert "highlighted" not in s["date~1"] and "highlighted" not in s["doctor~1"]
    assert s["fee-text~1"]["value"] == "€75.00" and s["doctor-fee~1"]["value"] == "€60.00"
    assert s["doctor-fee-text~1"]["value"] == "Doctor fee" and s["fee-text~1"].get("visible", True)
    assert s["approve"].get("enabled", True) is True
    await s.patch("/change", {"location~1": str(demo.locations["munich"])})  # Wednesday: no Munich hours
    assert s["location~1"]["highlighted"] is True
    assert "work hours" in s["time~1"]["error"]
    assert s["approve"]["enabled"] is False and s["fee-text~1"]["visible"] is False
    await s.matches_a_fresh_put()


async def test_invalid_input_shows_a_validation_message_and_keeps_fields_editable(client, login, demo):
    doctor = await login("doctor1")
    s = await Screen(client, doctor.headers, aid(demo, REQUESTED)).open()
    await s.patch("/add-alternative")
    await s.patch("/change", {"date~1": "25/11/2026", "time~1": "09:00"})
    assert "YYYY-MM-DD" in s["date~1"]["error"] and s["date~1"].get("enabled", True)
    assert s["approve"]["enabled"] is False
    await s.patch("/change", {"date~1": "2026-11-23", "time~1": "09:00"})
    assert "2 hours" in s["time~1"]["error"]


async def test_a_fourth_card_is_refused_with_a_validation_message(client, login, demo):
    doctor = await login("doctor1")
    s = await Screen(client, doctor.headers, aid(demo, REQUESTED)).open()
    for _ in range(3):
        await s.patch("/add-alternative")
    assert s["another-alternative"]["enabled"] is False
    body = await s.patch("/add-alternative", expect=422)
    assert body["code"] == "FIELDS_VALIDATION_ERROR" and "another-alternative" in body["fields"]
    assert not s.has("alternative-4")


async def test_delete_removes_a_card_but_never_the_only_one(client, login, demo):
    doctor = await login("doctor1")
    s = await Screen(client, doctor.headers, aid(demo, REQUESTED)).open()
    await s.patch("/add-alternative")
    body = await s.patch("/delete-alternative/1", expect=422)
    assert "delete~1" in body["fields"]
    await s.patch("/add-alternative")
    await s.patch("/add-alternative")
    await s.patch("/change", {"date~3": "2026-11-26", "time~3": "10:00"})
    await s.patch("/delete-alternative/2")
    assert not s.has("alternative-3") and s["date~2"]["value"] == "2026-11-26"
    await s.matches_a_fresh_put()


async def test_overlapping_alternatives_are_highlighted_until_resolved(client, login, demo):
    doctor = await login("doctor1")
    s = await Screen(client, doctor.headers, aid(demo, REQUESTED)).open()
    await s.patch("/add-alternative")
    await s.patch("/add-alternative")
    await s.patch("/change", {"date~1": "2026-11-24", "time~1": "10:00", "date~2": "2026-11-24", "time~2": "10:00"})
    assert "Same doctor" in s["time~2"]["error"] and s["approve"]["enabled"] is False
    await s.patch("/change", {"time~2": "10:15"})
    assert "Overlaps alternative 1" in s["time~2"]["error"]
    await s.patch("/change", {"time~2": "10:30"})
    assert "error" not in s["time~2"] and s["approve"].get("enabled", True)


async def test_the_timezone_must_be_confirmed_when_the_profile_has_none(client, login, demo):
    doctor = await login("doctor2")
    s = await Screen(client, doctor.headers, aid(demo, NO_TIMEZONE)).open()
    assert s["timezone"]["type"] == "Timezone" and s["timezone"]["value"] == "Europe/Berlin"
    await s.patch("/add-alternative")
    assert "error" not in s["timezone"]  # not before the doctor entered a time
    await s.patch("/change", {"date~1": "2026-11-26", "time~1": "10:00"})
    assert s["approve"]["enabled"] is False and s["timezone"]["error"]
    body = await s.patch("/timezone", {"timezone": "Mars/Olympus"}, expect=422)
    assert "timezone" in body["fields"]
    await s.patch("/timezone", {"timezone": "Europe/London"})
    assert s["timezone"]["value"] == "Europe/London" and "error" not in s["timezone"]
    assert s["time~1"]["label"] == "Time (Europe/London)"
    assert s["approve"].get("enabled", True) is True  # 10:00 London is 11:00 in Munich
    await s.matches_a_fresh_put()


async def test_disclaimer_acknowledgement_enables_approve_and_is_recorded(client, login, demo, runtime):
    doctor = await login("doctor1")
    a = aid(demo, DISCLAIMER)
    s = await Screen(client, doctor.headers, a).open()
    assert s["disclaimer-displayed"]["name"] == "disclaimer-displayed" and s["approve"]["enabled"] is False
    body = await s.patch("/disclaimer", {"disclaimer-displayed": "true"})
    assert any(p["op"] == "update" and p["id"] == "approve" for p in body["patches"])
    assert s["disclaimer-displayed"]["value"] is True and s["approve"].get("enabled", True)
    async with runtime.db.read() as session:
        actions = (await session.execute(select(AuditLog.action).where(AuditLog.entity_id == a))).scalars().all()
        draft = await session.get(ReviewDraft, (a, doctor.user["id"]))
    assert "review.disclaimer-acknowledged" in actions and draft.disclaimer_acknowledged_at is not None


async def test_prescription_warning_when_the_chosen_doctor_cannot_prescribe(client, login, demo):
    doctor = await login("doctor1")
    s = await Screen(client, doctor.headers, aid(demo, PRESCRIPTION)).open()
    await s.patch("/add-alternative")
    assert not s.has("prescription-info~1")
    await s.patch("/change", {"profile~1": str(demo.users["doctor3"])})
    assert s["prescription-info~1"]["type"] == "Link" and "prescribe" in s["prescription-info~1"]["warning"]
    assert s["doctor~1"]["highlighted"] is True


async def test_an_out_of_network_card_carries_a_coverage_warning_but_may_be_sent(client, login, demo):
    doctor = await login("doctor3")
    s = await Screen(client, doctor.headers, aid(demo, CHEN_OUT_OF_NETWORK)).open()
    assert "Out of network" in s["coverage-warning"]["value"]
    await s.patch("/add-alternative")
    await s.patch("/change", {"date~1": "2026-11-27", "time~1": "11:00"})
    assert "Out of network" in s["alternative-1"]["warning"] and s["approve"].get("enabled", True)


async def test_decline_opens_a_modal_and_cancel_discards_changes_and_exits(client, login, demo, runtime):
    doctor = await login("doctor1")
    a = aid(demo, REQUESTED)
    s = await Screen(client, doctor.headers, a).open()
    await s.patch("/decline-dialog")
    assert s["decline-modal"].get("visible", True) is True
    await s.patch("/decline-dialog/close")
    assert s["decline-modal"]["visible"] is False
    await s.patch("/add-alternative")
    body = await s.patch("/cancel")
    assert body["navigate"] == "/profile/appointments"
    async with runtime.db.read() as session:
        assert await session.get(ReviewDraft, (a, doctor.user["id"])) is None
    fresh = await Screen(client, doctor.headers, a).open()
    assert not fresh.has("alternative-1")


async def test_an_unchanged_poll_is_empty_and_another_tabs_edit_reaches_the_poll(client, login, demo):
    doctor = await login("doctor1")
    a = aid(demo, REQUESTED)
    s = await Screen(client, doctor.headers, a).open()
    assert (await s.patch(""))["patches"] == []
    other = await Screen(client, doctor.headers, a).open()
    await other.patch("/add-alternative")
    body = await s.patch("")
    assert body["patches"] and s.has("alternative-1")
    await s.matches_a_fresh_put()


async def test_editing_a_card_of_someone_elses_appointment_is_404(client, login, demo):
    other = await login("doctor2")
    response = await client.patch(approve_url(aid(demo, REQUESTED)) + "/add-alternative", headers=other.headers)
    assert response.status_code == 404


async def test_an_open_screen_follows_a_decision_made_elsewhere(client, login, demo):
    doctor = await login("doctor1")
    elsewhere = await login("doctor1")  # the same doctor on another device
    a = aid(demo, REQUESTED)
    s = await Screen(client, doctor.headers, a).open()
    response = await client.post(approve_url(a), headers=elsewhere.headers, data={"version": "1"})
    assert response.status_code == 200
    await s.patch("")
    assert s["status"]["props"]["status"] == "approved" and s["approve"]["enabled"] is False
    assert s["decline"]["enabled"] is False and s["version"]["value"] == "2"
    assert "already approved" in s["status-note"]["value"]


async def test_changing_a_card_that_does_not_exist_is_refused(client, login, demo):
    doctor = await login("doctor1")
    s = await Screen(client, doctor.headers, aid(demo, REQUESTED)).open()
    body = await s.patch("/change", {"date~2": "2026-11-25"}, expect=422)
    assert "date~2" in body["fields"]
    body = await s.patch("/change", {"unrelated": "x"}, expect=422)
    assert body["code"] == "FIELDS_VALIDATION_ERROR"


async def test_a_decline_reason_over_the_limit_is_refused(client, login, demo):
    doctor = await login("doctor1")
    a = aid(demo, REQUESTED)
    response = await client.post(
        f"/profile/appointments/{a}/decline", headers=doctor.headers, data={"reason": "x" * 1001, "version": "1"}
    )
    assert response.status_code == 422 and "reason" in response.json()["fields"]


async def test_a_pending_appointment_links_to_the_offers_sent(client, login, demo):
    from tests.support.review import PENDING_5

    doctor = await login("doctor1")
    s = await Screen(client, doctor.headers, aid(demo, PENDING_5)).open()
    assert s["offers-link"]["action"]["endpoint"] == f"/profile/appointments/{aid(demo, PENDING_5)}/offers"
    assert s["approve"]["enabled"] is False and "answer is awaited" in s["status-note"]["value"]


async def test_suggest_another_alternative_is_disabled_with_the_reason_when_every_date_must_fail(client, login, demo):
    doctor = await login("doctor1")
    expired = await Screen(client, doctor.headers, aid(demo, NOT_COVERED)).open()
    assert expired["another-alternative"]["enabled"] is False
    assert "policy does not cover any date" in expired["another-alternative-note"]["value"]
    invalid = await Screen(client, doctor.headers, aid(demo, THIRD_PARTY_INVALID)).open()
    assert invalid["another-alternative"]["enabled"] is False
    assert "insurer's data" in invalid["another-alternative-note"]["value"]
    covered = await Screen(client, doctor.headers, aid(demo, REQUESTED)).open()
    assert covered["another-alternative"].get("enabled", True) is not False
    assert covered["another-alternative-note"].get("visible") is False


async def test_the_changes_a_tab_is_making_are_not_called_restored_there_but_are_after_a_reload(client, login, demo):
    doctor = await login("doctor1")
    tab = {**doctor.headers, "X-Client-Id": "tab-1"}
    s = await Screen(client, tab, aid(demo, REQUESTED)).open()
    assert s["draft-note"]["visible"] is False
    await s.patch("/add-alternative")
    await s.patch("/change", {"date~1": "2020-01-01", "time~1": "07:00"})
    await s.patch("/disclaimer", {"disclaimer-displayed": "true"})
    # Nothing was restored on this tab: it made these changes itself, now.
    assert s["draft-note"].get("visible", True) is False
    await s.matches_a_fresh_put()  # the same tab's fresh page agrees
    # The tab reloaded (the web app gets a new client id) or another device: the changes were kept, and it says so.
    reloaded = await Screen(client, {**doctor.headers, "X-Client-Id": "tab-2"}, aid(demo, REQUESTED)).open()
    assert reloaded["draft-note"].get("visible", True) is not False
    assert reloaded["draft-note"]["value"].startswith("Restored your unsent changes from ")


async def test_a_draft_left_on_the_phone_is_shown_on_the_desktop_with_its_time_and_can_be_discarded_there(
    client, login, demo
):
    doctor = await login("doctor1")
    phone_headers = {**doctor.headers, "X-Client-Id": "phone-tab", "X-Layout": "mobile"}
    desktop_headers = {**doctor.headers, "X-Client-Id": "desktop-tab"}
    phone = await Screen(client, phone_headers, aid(demo, REQUESTED)).open()
    assert phone["draft-note"]["visible"] is False  # nothing kept yet
    await phone.patch("/add-alternative")
    await phone.patch("/change", {"date~1": "2020-01-01", "time~1": "07:00"})  # a bad card, never sent

    desktop = await Screen(client, desktop_headers, aid(demo, REQUESTED)).open()
    note = desktop["draft-note"]
    assert note.get("visible", True) is not False
    assert note["value"].startswith("Restored your unsent changes from ")
    assert desktop.has("alternative-1") and desktop["approve"]["enabled"] is False

    await desktop.patch("/discard")
    assert not desktop.has("alternative-1")
    assert desktop["draft-note"]["visible"] is False
    assert desktop["approve"].get("enabled", True) is not False
    # The phone's next poll follows: its card is gone too.
    response = await client.patch(approve_url(phone.a), headers={**phone_headers, "X-Screen-State": phone.state})
    assert response.status_code == 200, response.text
    phone.elements = apply(phone.elements, response.json()["patches"])
    assert not phone.has("alternative-1")


async def test_a_line_beside_approve_says_what_it_will_send(client, login, demo):
    doctor = await login("doctor1")
    s = await Screen(client, {**doctor.headers, "X-Client-Id": "tab-effect"}, aid(demo, REQUESTED)).open()
    assert s["approve"]["label"] == "Approve"
    assert s["approve-effect"]["value"] == "Approves the requested time and tells the patient."
    await s.patch("/add-alternative")
    assert s["approve"]["label"] == "Approve"  # the spec's button keeps its label
    assert s["approve-effect"]["value"] == "Sends 1 alternative to the patient, who chooses or declines it."
    await s.patch("/add-alternative")
    assert s["approve-effect"]["value"] == "Sends 2 alternatives to the patient, who chooses one or declines them."
    await s.matches_a_fresh_put()
    german = await Screen(
        client, {**doctor.headers, "X-Client-Id": "tab-effect", "Accept-Language": "de"}, aid(demo, REQUESTED)
    ).open()
    assert (
        german["approve-effect"]["value"]
        == "Sendet dem Patienten 2 Alternativen, von denen er eine wählt oder alle ablehnt."
    )


async def test_an_alternative_on_an_open_offers_time_names_the_offer_not_another_patient(client, login, demo, runtime):
    """The offer may be the same patient's, so the message speaks of another appointment; in
    English and German."""
    async with runtime.db.read() as session:
        offer = (
            (
                await session.execute(
                    select(AppointmentOffer)
                    .where(AppointmentOffer.appointment_id == aid(demo, PENDING_5))
                    .order_by(AppointmentOffer.n)
                )
            )
            .scalars()
            .first()
        )
        zone = ZoneInfo((await session.get(Location, offer.location_id)).timezone)
    local = offer.start_at.astimezone(zone)
    card = {
        "profile~1": str(offer.doctor_id),
        "location~1": str(offer.location_id),
        "date~1": f"{local:%Y-%m-%d}",
        "time~1": f"{local:%H:%M}",
    }
    for language, words in (
        ("en", "Overlaps an offer sent for another appointment"),
        ("de", "Angebot für einen anderen Termin"),
    ):
        doctor = await login("doctor1")
        headers = {**doctor.headers, "Accept-Language": language}
        s = await Screen(client, headers, aid(demo, REQUESTED)).open()
        if not s.has("alternative-1"):
            await s.patch("/add-alternative")
        await s.patch("/change", card)
        messages = " ".join(str(s[f"{f}~1"].get("error") or "") for f in ("doctor", "location", "date", "time"))
        assert words in messages, messages
        assert "patient" not in messages and "Patient" not in messages
