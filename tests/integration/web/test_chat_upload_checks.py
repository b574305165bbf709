"""Upload checks by parsing: what byte patterns missed is refused (nothing stored) or, for images, re-encoded away;
only the field ``file`` carries a file; uploads go through a temporary file that is gone after the request."""

from __future__ import annotations

import asyncio
import io
import os
import tempfile
import threading

import pytest
from PIL import Image
from sqlalchemy import select

from doctordesk.domain.files import check as file_check
from doctordesk.domain.files import pdfs as pdf_check
from doctordesk.services.chat import file_checking
from doctordesk.store.chat_tables import Attachment
from doctordesk.store.seed import sample_files
from tests.support import images
from tests.support.chat import send, stored
from tests.support.pdf_builder import pdf

OPENS_4 = b"<< /Type /Catalog /Pages 2 0 R /OpenAction 4 0 R >>"


def _file(name: str, data: bytes, field: str = "file") -> dict[str, tuple[str, bytes, str]]:
    return {field: (name, data, "application/octet-stream")}


async def _refused(response, field: str = "file") -> str:
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["code"] == "FIELDS_VALIDATION_ERROR" and body["kind"] == "error"
    assert list(body["fields"]) == [field]
    message: str = body["fields"][field]
    return message


async def _download(client, who, runtime) -> bytes:
    async with runtime.db.read() as session:
        attachment_id = await session.scalar(select(Attachment.id).order_by(Attachment.id.desc()).limit(1))
    response = await client.get(f"/profile/messages/attachments/{attachment_id}", headers=who.headers)
    assert response.status_code == 200
    return response.content


async def test_pdf_with_hex_escaped_javascript_is_refused_and_nothing_stored(client, login, demo, runtime):
    data = pdf([b"<< /S /J#61vaScript /J#53 (app.alert(1)) >>"], catalog=OPENS_4, compressed=False)
    response = await send(client, await login("doctor1"), demo.appointments[0], "x", files=_file("r.pdf", data))
    assert await _refused(response) == pdf_check.ACTIVE_MESSAGE
    assert await stored(runtime) == (0, 0, 0)


async def test_pdf_with_javascript_in_a_compressed_object_stream_is_refused_and_nothing_stored(
    client, login, demo, runtime
):
    data = pdf([b"<< /S /JavaScript /JS (app.launchURL('x')) >>"], catalog=OPENS_4, compressed=True)
    assert b"JavaScript" not in data
    response = await send(client, await login("doctor1"), demo.appointments[0], "x", files=_file("r.pdf", data))
    assert await _refused(response) == pdf_check.ACTIVE_MESSAGE
    assert await stored(runtime) == (0, 0, 0)


async def test_pdf_with_a_web_link_in_an_object_stream_is_stored_as_sent(client, login, demo, runtime):
    doctor = await login("doctor1")
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Annots [4 0 R] >>"
    link = b"<< /Type /Annot /Subtype /Link /Rect [0 0 9 9] /A << /S /URI /URI (https://lab.example.org/r) >> >>"
    data = pdf([link], page=page, compressed=True)
    response = await send(client, doctor, demo.appointments[0], "x", files=_file("r.pdf", data))
    assert response.status_code == 200, response.text
    assert await _download(client, doctor, runtime) == data


async def test_pdf_with_a_script_link_in_an_object_stream_is_refused(client, login, demo, runtime):
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Annots [4 0 R] >>"
    link = b"<< /Type /Annot /Subtype /Link /Rect [0 0 9 9] /A << /S /URI /URI (javascript:alert(1)) >> >>"
    data = pdf([link], page=page, compressed=True)
    response = await send(client, await login("doctor1"), demo.appointments[0], "x", files=_file("r.pdf", data))
    assert await _refused(response) == pdf_check.ACTIVE_MESSAGE
    assert await stored(runtime) == (0, 0, 0)


async def test_malformed_pdf_is_a_validation_error_not_a_server_error(client, login, demo, runtime):
    data = pdf(compressed=True).replace(b"/FlateDecode", b"/LZWDecode", 1)
    response = await send(client, await login("doctor1"), demo.appointments[0], "x", files=_file("r.pdf", data))
    assert await _refused(response) == pdf_check.UNREADABLE_MESSAGE
    assert await stored(runtime) == (0, 0, 0)


async def test_decompression_bomb_is_refused_and_nothing_stored(client, login, demo, runtime):
    bomb = images.png_bomb(8000, 8000)
    response = await send(client, await login("doctor1"), demo.appointments[0], "x", files=_file("b.png", bomb))
    assert "too many pixels" in await _refused(response)
    assert await stored(runtime) == (0, 0, 0)


async def test_an_image_over_the_decode_budget_is_refused_and_nothing_stored(client, login, demo, runtime):
    zeros = images.png_bomb(6300, 6300, rgba=True)  # 39.7 megapixels, 159 MB once decoded
    doctor = await login("doctor1")
    response = await send(client, doctor, demo.appointments[0], "x", files=_file("z.png", zeros))
    assert "too large to check" in await _refused(response)
    assert await stored(runtime) == (0, 0, 0)
    # Four at once: each refused alike, none decoded.
    answers = await asyncio.gather(
        *(send(client, doctor, demo.appointments[0], "x", files=_file("z.png", zeros)) for _ in range(4))
    )
    assert {a.status_code for a in answers} == {422}
    assert await stored(runtime) == (0, 0, 0)


@pytest.mark.parametrize("field", ["attachment", "files[]", "content"])
async def test_file_part_under_another_field_name_is_refused_naming_that_field(client, login, demo, runtime, field):
    doctor = await login("doctor1")
    response = await send(client, doctor, demo.appointments[0], "x", files=_file("r.pdf", pdf(compressed=False), field))
    assert "file" in await _refused(response, field)
    assert await stored(runtime) == (0, 0, 0)


async def test_second_file_under_another_name_is_refused_naming_it(client, login, demo, runtime):
    files = [
        ("file", ("a.pdf", pdf(compressed=False), "application/pdf")),
        ("extra", ("b.png", images.screenshot(), "image/png")),
    ]
    response = await send(client, await login("doctor1"), demo.appointments[0], "two", files=files)
    assert "file" in await _refused(response, "extra")
    assert await stored(runtime) == (0, 0, 0)


@pytest.mark.parametrize("compressed", [False, True], ids=["xref-table", "object-stream"])
async def test_clean_pdf_is_stored_as_sent(client, login, demo, runtime, compressed):
    doctor = await login("doctor1")
    data = pdf(compressed=compressed)
    response = await send(client, doctor, demo.appointments[0], "x", files=_file("lab.pdf", data))
    assert response.status_code == 200, response.text
    assert await stored(runtime) == (1, 1, 1)
    assert await _download(client, doctor, runtime) == data


async def test_clean_png_and_jpeg_are_accepted_as_the_same_picture(client, login, demo, runtime):
    doctor = await login("doctor1")
    for name, data in (("s.png", images.screenshot()), ("p.jpg", images.photo())):
        response = await send(client, doctor, demo.appointments[0], "x", files=_file(name, data))
        assert response.status_code == 200, response.text
        downloaded = Image.open(io.BytesIO(await _download(client, doctor, runtime)))
        original = Image.open(io.BytesIO(data))
        assert (downloaded.format, downloaded.size) == (original.format, original.size)
    assert await stored(runtime) == (1, 2, 2)


async def test_photo_metadata_and_appended_bytes_are_gone_from_the_downloaded_file(client, login, demo, runtime):
    doctor = await login("doctor1")
    tail = b"\x00" * 5000 + b"<html><script>alert(document.cookie)</script></html>"
    data = images.photo(orientation=6) + tail
    assert b"SecretCam" in data and b"Jane Roe" in data
    response = await send(client, doctor, demo.appointments[0], "x", files=_file("rash.jpg", data))
    assert response.status_code == 200, response.text
    downloaded = await _download(client, doctor, runtime)
    for secret in (b"SecretCam", b"Jane Roe", b"Exif", b"<script>"):
        assert secret not in downloaded
    picture = Image.open(io.BytesIO(downloaded))
    assert picture.size == (32, 64) and not picture.getexif()  # turned upright, then EXIF dropped
    async with runtime.db.read() as session:
        row = await session.scalar(select(Attachment).order_by(Attachment.id.desc()).limit(1))
        assert row is not None and row.size == len(downloaded) < len(data)


async def test_html_deep_inside_a_png_is_not_stored(client, login, demo, runtime):
    doctor = await login("doctor1")
    text = {**{f"k{i}": "x" * 1000 for i in range(6)}, "late": "<html><script>alert(1)</script></html>"}
    data = images.screenshot(text=text) + b"<svg onload=alert(1)>"
    assert data.index(b"<html>") > 4096
    response = await send(client, doctor, demo.appointments[0], "x", files=_file("s.png", data))
    assert response.status_code == 200, response.text
    downloaded = await _download(client, doctor, runtime)
    assert b"<html>" not in downloaded and b"<svg" not in downloaded and b"tEXt" not in downloaded


async def test_files_are_checked_in_the_check_threads_not_on_the_event_loop(client, login, demo, monkeypatch):
    seen: list[str] = []

    def recording(stream, **options):
        seen.append(threading.current_thread().name)
        return file_check.check(stream, **options)

    monkeypatch.setattr(file_checking, "check", recording)
    doctor = await login("doctor1")
    response = await send(client, doctor, demo.appointments[0], "x", files=_file("p.jpg", images.photo()))
    assert response.status_code == 200
    assert len(seen) == 1 and seen[0].startswith("file-check")


async def test_large_upload_goes_through_a_temporary_file_that_is_gone_after_the_request(
    client, login, demo, runtime, tmp_path, monkeypatch
):
    spool = tmp_path / "spool"
    spool.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spool))
    opened: list[str] = []
    real_check = file_check.check

    def recording(stream, **options):
        # While the file is checked it is on disk, in the spool directory (unnamed: deleted when closed).
        opened.extend(os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd") if _is_in(fd, spool))
        return real_check(stream, **options)

    monkeypatch.setattr(file_checking, "check", recording)
    data = sample_files.pdf(padding=1024 * 1024)
    response = await send(client, await login("doctor1"), demo.appointments[0], "x", files=_file("big.pdf", data))
    assert response.status_code == 200, response.text
    assert opened, "a 1 MiB upload is spooled to disk"
    assert not [fd for fd in os.listdir("/proc/self/fd") if _is_in(fd, spool)]
    assert os.listdir(spool) == []


def _is_in(fd: str, directory) -> bool:
    try:
        return os.readlink(f"/proc/self/fd/{fd}").startswith(str(directory))
    except OSError:
        return False


def _zip_of(name: str, data: bytes) -> bytes:
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(name, data)
    return out.getvalue()


@pytest.mark.parametrize("kind", ["png", "jpeg"])
async def test_an_image_with_an_archive_appended_is_stored_and_served_as_its_re_encoding_only(
    client, login, demo, runtime, kind
):
    doctor = await login("doctor1")
    payload = _zip_of("run.html", b"<script>alert(document.cookie)</script>" * 50)
    picture = images.screenshot() if kind == "png" else images.photo()
    data = picture + payload
    response = await send(client, doctor, demo.appointments[0], "x", files=_file(f"scan.{kind}", data))
    assert response.status_code == 200, response.text
    served = await _download(client, doctor, runtime)
    assert served == file_check.check_bytes(data).read() == file_check.check_bytes(picture).read()
    assert b"PK\x03\x04" not in served and b"PK\x05\x06" not in served and b"<script>" not in served
    async with runtime.db.read() as session:
        row = await session.scalar(select(Attachment).order_by(Attachment.id.desc()).limit(1))
        assert row is not None and row.size == len(served)
