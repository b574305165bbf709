from __future__ import annotations

from tests.support.chat import messages, open_chat


def _by_id(elements):
    from tests.support.chat import walk

    return {e["id"]: e for e in walk(elements)}


async def test_demo_has_chat_threads_with_unread_messages_and_both_kinds_of_file(client, login, demo):
    doctor = await login("doctor1")
    listing = (await client.put("/profile/appointments", headers=doctor.headers)).json()
    assert _by_id(listing["elements"])[f"unread-{demo.appointments[2]}"]["value"] == "3"
    page = await open_chat(client, doctor, demo.appointments[2])
    viewers = [c for m in messages(page["elements"]) for c in m.get("children", [])]
    assert [v["props"]["mime"] for v in viewers] == ["application/pdf"]
    download = await client.get(viewers[0]["props"]["href"], headers=doctor.headers)
    assert download.status_code == 200 and download.content.startswith(b"%PDF-")
    png_page = await open_chat(client, doctor, demo.appointments[6])
    png = [c for m in messages(png_page["elements"]) for c in m.get("children", [])]
    assert png[0]["props"]["mime"] == "image/png"
    support = await login("support2")  # answered the photo thread, has not read the doctor's follow-up
    threads = (await client.put("/profile/messages/threads", headers=support.headers)).json()
    rows = [e["id"] for e in threads["elements"][1]["children"] if e["type"] == "Row"]
    assert rows == [f"thread-{demo.appointments[i]}" for i in (6, 2, 15)]
    assert _by_id(threads["elements"])[f"unread-{demo.appointments[6]}"]["value"] == "1"
