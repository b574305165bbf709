"""Attachments: type from the bytes, one file, size limit while streaming, safe names, safe downloads."""

from __future__ import annotations

import os
import tempfile

import httpx
import pytest
from sqlalchemy import select

from doctordesk.store.chat_tables import Attachment
from doctordesk.store.seed import sample_files
from tests.support.chat import SEND, messages, open_chat, send, stored


def _file(name: str, data: bytes, declared: str = "application/octet-stream") -> dict[str, tuple[str, bytes, str]]:
    return {"file": (name, data, declared)}


async def _stored_file(runtime) -> Attachment:
    async with runtime.db.read() as session:
        found = await session.scalar(select(Attachment).order_by(Attachment.id.desc()).limit(1))
        assert found is not None
        return found


async def test_pdf_is_stored_with_the_type_from_its_bytes_and_shown_in_the_chat(client, login, demo, runtime):
    doctor = await login("doctor1")
    a = demo.appointments[0]
    response = await send(client, doctor, a, "The report", files=_file("report.pdf", sample_files.pdf()))
    assert response.status_code == 200, response.text
    file = await _stored_file(runtime)
    assert (file.mime, file.filename, file.data) == ("application/pdf", "report.pdf", sample_files.pdf())
    page = await open_chat(client, doctor, a)
    viewer = messages(page["elements"])[0]["children"][0]
    assert viewer["id"].startswith("attachmentViewer~") and viewer["props"]["mime"] == "application/pdf"


async def test_file_without_text_is_a_valid_message(client, login, demo, runtime):
    response = await send(
        client, await login("doctor1"), demo.appointments[0], "", files=_file("a.png", sample_files.png())
    )
    assert response.status_code == 200
    assert await stored(runtime) == (1, 1, 1)


async def test_wrong_magic_is_refused(client, login, demo, runtime):
    response = await send(
        client, await login("doctor1"), demo.appointments[0], "x", files=_file("setup.pdf", b"MZ\x90\x00" + b"\0" * 100)
    )
    assert response.status_code == 422 and response.json()["code"] == "FIELDS_VALIDATION_ERROR"
    assert "file" in response.json()["fields"]
    assert await stored(runtime) == (0, 0, 0)


async def test_polyglot_file_is_refused(client, login, demo, runtime):
    png = sample_files.png()
    polyglot = png[:33] + b"\x00\x00\x00\x1ftEXt<script>alert(1)</script>xx" + png[33:]
    response = await send(client, await login("doctor1"), demo.appointments[0], "x", files=_file("cat.png", polyglot))
    assert response.status_code == 422 and "file" in response.json()["fields"]
    assert await stored(runtime) == (0, 0, 0)


async def test_zero_byte_file_is_refused(client, login, demo, runtime):
    response = await send(client, await login("doctor1"), demo.appointments[0], "x", files=_file("empty.pdf", b""))
    assert response.status_code == 422 and response.json()["fields"]["file"] == "The file is empty."
    assert await stored(runtime) == (0, 0, 0)


async def test_empty_file_part_without_a_name_means_no_file(client, login, demo, runtime):
    # What a browser sends for an untouched file input.
    response = await send(client, await login("doctor1"), demo.appointments[0], "text only", files=_file("", b""))
    assert response.status_code == 200
    assert await stored(runtime) == (1, 1, 0)


async def test_second_file_part_is_refused(client, login, demo, runtime):
    files = [
        ("file", ("a.pdf", sample_files.pdf(), "application/pdf")),
        ("file", ("b.png", sample_files.png(), "image/png")),
    ]
    response = await send(client, await login("doctor1"), demo.appointments[0], "two", files=files)
    assert response.status_code == 422 and response.json()["code"] == "FIELDS_VALIDATION_ERROR"
    assert response.json()["fields"] == {"file": "At most one file per message."}
    other_name = [
        ("file", ("a.pdf", sample_files.pdf(), "application/pdf")),
        ("extra", ("b.png", sample_files.png(), "image/png")),
    ]
    assert (
        await send(client, await login("doctor1"), demo.appointments[0], "two", files=other_name)
    ).status_code == 422
    assert await stored(runtime) == (0, 0, 0)


async def test_oversized_upload_is_refused_413_while_streaming(client, login, demo, runtime, tmp_path, monkeypatch):
    """The body streams in chunks; the answer comes once the limit is crossed, long before the end."""
    runtime.settings.max_upload_bytes = 64 * 1024
    doctor = await login("doctor1")
    boundary = "chatboundary"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="appointment-id"\r\n\r\n{demo.appointments[0]}\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\n'
        "Content-Type: application/pdf\r\n\r\n%PDF-1.4\n"
    ).encode()
    chunk = b"x" * 8192
    total_chunks = 1000  # 8 MB announced, the limit is 64 KiB
    sent = 0

    async def body():
        nonlocal sent
        yield head
        for _ in range(total_chunks):
            sent += 1
            yield chunk
        yield f"\r\n--{boundary}--\r\n".encode()

    spool = tmp_path / "spool"
    spool.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spool))
    response = await client.post(
        SEND,
        content=body(),
        headers={**doctor.headers, "Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    assert response.status_code == 413
    assert response.json()["code"] == "PAYLOAD_TOO_LARGE"
    assert sent < 20, f"the server read {sent} of {total_chunks} chunks before answering"
    assert await stored(runtime) == (0, 0, 0)
    # Nothing spooled to disk either.
    assert os.listdir(spool) == []


async def test_declared_length_over_the_limit_is_refused_before_reading(client, login, demo, runtime):
    runtime.settings.max_upload_bytes = 64 * 1024
    doctor = await login("doctor1")
    response = await send(
        client, doctor, demo.appointments[0], "x", files=_file("big.pdf", sample_files.pdf(padding=200 * 1024))
    )
    assert response.status_code == 413
    assert await stored(runtime) == (0, 0, 0)


async def test_file_just_under_the_limit_is_accepted(client, login, demo, runtime):
    runtime.settings.max_upload_bytes = 64 * 1024
    data = sample_files.pdf(padding=60 * 1024)
    response = await send(client, await login("doctor1"), demo.appointments[0], "x", files=_file("ok.pdf", data))
    assert response.status_code == 200
    assert (await _stored_file(runtime)).size == len(data)


async def test_path_traversal_filename_is_neutralised(client, login, demo, runtime):
    doctor = await login("doctor1")
    response = await send(
        client, doctor, demo.appointments[0], "x", files=_file("../../../etc/passwd.pdf", sample_files.pdf())
    )
    assert response.status_code == 200
    assert (await _stored_file(runtime)).filename == "passwd.pdf"


def _raw_multipart(appointment_id: int, filename: bytes, data: bytes) -> tuple[bytes, str]:
    """A multipart body written by hand, so the file name reaches the server byte for byte."""
    boundary = "rawboundary"
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="appointment-id"\r\n\r\n{appointment_id}\r\n'.encode()
        + f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="'.encode()
        + filename
        + b'"\r\nContent-Type: application/pdf\r\n\r\n'
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return body, f"multipart/form-data; boundary={boundary}"


async def test_a_filename_with_control_characters_is_refused_and_nothing_stored(client, login, demo, runtime):
    doctor = await login("doctor1")
    before = await stored(runtime)
    for name in ("scan\x07.pdf", "scan\x1b[31m.pdf", "scan\x7f.pdf", "sc\tan.pdf"):
        body, content_type = _raw_multipart(demo.appointments[0], name.encode(), sample_files.pdf())
        response = await client.post(SEND, content=body, headers={**doctor.headers, "Content-Type": content_type})
        assert response.status_code == 422, response.text
        assert "file" in response.json()["fields"]
    assert await stored(runtime) == before


async def test_format_characters_in_a_filename_are_neutralised(client, login, demo, runtime):
    doctor = await login("doctor1")
    name = "scan\u202egnp.exe.pdf".encode()
    body, content_type = _raw_multipart(demo.appointments[0], name, sample_files.pdf())
    response = await client.post(SEND, content=body, headers={**doctor.headers, "Content-Type": content_type})
    assert response.status_code == 200, response.text
    file = await _stored_file(runtime)
    assert file.filename == "scangnp.exe.pdf"
    download = await client.get(f"/profile/messages/attachments/{file.id}", headers=doctor.headers)
    assert download.headers["content-disposition"] == (
        "attachment; filename=\"scangnp.exe.pdf\"; filename*=UTF-8''scangnp.exe.pdf"
    )


async def test_very_long_filename_is_cut(client, login, demo, runtime):
    doctor = await login("doctor1")
    response = await send(
        client, doctor, demo.appointments[0], "x", files=_file("n" * 3000 + ".png", sample_files.png())
    )
    assert response.status_code == 200
    name = (await _stored_file(runtime)).filename
    assert len(name) == 120 and name.endswith(".png")


async def test_unicode_filename_is_kept_and_sent_back_per_rfc_5987(client, login, demo, runtime):
    doctor = await login("doctor1")
    name = "Röntgenbefund 日本語.jpg"
    response = await send(
        client, doctor, demo.appointments[0], "x", files=_file(name, sample_files.jpeg(), "image/jpeg")
    )
    assert response.status_code == 200
    file = await _stored_file(runtime)
    assert file.filename == name
    download = await client.get(f"/profile/messages/attachments/{file.id}", headers=doctor.headers)
    disposition = download.headers["content-disposition"]
    assert disposition.startswith('attachment; filename="Rontgenbefund .jpg"')
    assert "filename*=UTF-8''R%C3%B6ntgenbefund%20%E6%97%A5%E6%9C%AC%E8%AA%9E.jpg" in disposition


async def test_a_declared_type_that_lies_is_ignored(client, login, demo, runtime):
    doctor = await login("doctor1")
    # PNG bytes announced as a PDF named .pdf: stored and served as the PNG it is.
    response = await send(
        client, doctor, demo.appointments[0], "x", files=_file("invoice.pdf", sample_files.png(), "application/pdf")
    )
    assert response.status_code == 200
    file = await _stored_file(runtime)
    assert (file.mime, file.filename) == ("image/png", "invoice.png")
    # HTML announced as an image is refused.
    response = await send(
        client, doctor, demo.appointments[0], "x", files=_file("x.png", b"<html><script>1</script>", "image/png")
    )
    assert response.status_code == 422


async def test_download_sends_the_stored_type_as_an_attachment_with_nosniff(client, login, demo, runtime):
    doctor = await login("doctor1")
    await send(client, doctor, demo.appointments[0], "x", files=_file("report.pdf", sample_files.pdf(), "text/html"))
    file = await _stored_file(runtime)
    for who in (doctor, await login("support2"), await login("admin")):
        response = await client.get(f"/profile/messages/attachments/{file.id}", headers=who.headers)
        assert response.status_code == 200
        assert response.content == sample_files.pdf()
        assert response.headers["content-type"] == "application/pdf"
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["content-disposition"].startswith("attachment;")
        assert "default-src 'none'" in response.headers["content-security-policy"]


async def test_download_by_a_non_participant_is_not_found(client, login, demo, runtime):
    await send(client, await login("doctor1"), demo.appointments[0], "x", files=_file("r.pdf", sample_files.pdf()))
    file = await _stored_file(runtime)
    other = await login("doctor2")
    assert (await client.get(f"/profile/messages/attachments/{file.id}", headers=other.headers)).status_code == 404
    patient = await login("patient1")
    assert (await client.get(f"/profile/messages/attachments/{file.id}", headers=patient.headers)).status_code == 403
    doctor = await login("doctor1")
    assert (await client.get(f"/profile/messages/attachments/{file.id + 1}", headers=doctor.headers)).status_code == 404
    assert (await client.get("/profile/messages/attachments/0", headers=doctor.headers)).status_code == 422


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/json", "multipart/form-data", "multipart/form-data; boundary=x"],
)
async def test_malformed_send_bodies_are_validation_errors(client, login, demo, runtime, content_type):
    doctor = await login("doctor1")
    response = await client.post(SEND, content=b"garbage", headers={**doctor.headers, "Content-Type": content_type})
    assert response.status_code == 422 and response.json()["kind"] == "error"
    assert await stored(runtime) == (0, 0, 0)


async def test_invalid_utf8_text_is_refused(client, login, demo, runtime):
    doctor = await login("doctor1")
    files = {"content": (None, b"\xff\xfe bad"), "appointment-id": (None, str(demo.appointments[0]).encode())}
    response = await client.post(SEND, files=files, headers=doctor.headers)
    assert response.status_code == 422 and "content" in response.json()["fields"]
    assert isinstance(response, httpx.Response)
    assert await stored(runtime) == (0, 0, 0)
