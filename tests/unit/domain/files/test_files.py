from __future__ import annotations

import pytest

from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.files import attachments as files
from doctordesk.store.seed import sample_files


def test_pdf_png_and_jpeg_are_recognised_from_their_first_bytes():
    assert files.sniff(sample_files.pdf()[:8]) is files.PDF
    assert files.sniff(sample_files.png()[:8]) is files.PNG
    assert files.sniff(sample_files.jpeg()[:8]) is files.JPEG


def test_zero_byte_file_is_refused():
    with pytest.raises(ValidationFailed) as caught:
        files.sniff(b"")
    assert "empty" in caught.value.fields["file"]


@pytest.mark.parametrize(
    "data",
    [
        b"MZ\x90\x00\x03\x00\x00\x00" + b"\x00" * 64,  # a Windows executable
        b"<html><script>alert(1)</script></html>",
        b"GIF89a\x01\x00\x01\x00",
        b"PK\x03\x04" + b"\x00" * 40,
        b"just some text",
    ],
)
def test_wrong_magic_is_refused(data):
    with pytest.raises(ValidationFailed) as caught:
        files.sniff(data[:8])
    assert "not allowed" in caught.value.fields["file"]


# --- names ----------------------------------------------------------------------------------------------------


def test_path_components_are_stripped_from_the_filename():
    assert files.safe_filename("../../etc/passwd.pdf", files.PDF) == "passwd.pdf"
    assert files.safe_filename("..\\..\\windows\\system32\\report.pdf", files.PDF) == "report.pdf"
    assert files.safe_filename("/", files.PDF) == "attachment.pdf"
    assert files.safe_filename("..", files.PNG) == "attachment.png"


def test_control_and_bidi_characters_are_removed_from_the_filename():
    assert files.safe_filename("re\x00po\r\nrt\x1b[31m.pdf", files.PDF) == "report[31m.pdf"
    # U+202E RIGHT-TO-LEFT OVERRIDE would show "invoice\u202egpj.exe" as "invoiceexe.jpg"
    assert files.safe_filename("invoice\u202egnp.exe", files.PNG) == "invoicegnp.exe.png"


def test_very_long_filename_is_cut_keeping_the_extension():
    name = files.safe_filename("a" * 5000 + ".pdf", files.PDF)
    assert len(name) == files.MAX_FILENAME_CHARS and name.endswith(".pdf")


def test_unicode_filename_is_kept():
    assert files.safe_filename("Befund_Müller_日本.pdf", files.PDF) == "Befund_Müller_日本.pdf"


def test_extension_follows_the_detected_type_not_the_declared_one():
    assert files.safe_filename("scan.pdf", files.PNG) == "scan.png"
    assert files.safe_filename("photo.JPEG", files.JPEG) == "photo.jpeg"
    assert files.safe_filename("payload.html", files.PDF) == "payload.html.pdf"
    assert files.safe_filename(None, files.JPEG) == "attachment.jpg"


def test_content_disposition_has_an_ascii_fallback_and_the_utf8_name():
    header = files.content_disposition('Befund "Müller" 日本.pdf')
    assert header.startswith('attachment; filename="Befund _Muller_ .pdf"')
    assert "filename*=UTF-8''Befund%20%22M%C3%BCller%22%20%E6%97%A5%E6%9C%AC.pdf" in header
    assert "\r" not in header and "\n" not in header
