"""File checks by parsing: PDFs walked object by object (object streams included), images decoded and re-encoded."""

from __future__ import annotations

import io

import pytest
from PIL import Image
from pypdf import PdfReader, PdfWriter
from pypdf.actions import JavaScript
from pypdf.annotations import Link

from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.files import attachments as files
from doctordesk.domain.files import check as file_check
from doctordesk.domain.files import images as image_check
from doctordesk.domain.files import pdfs as pdf_check
from doctordesk.store.seed import sample_files
from tests.support import images
from tests.support.pdf_builder import pdf

OPENS_4 = b"<< /Type /Catalog /Pages 2 0 R /OpenAction 4 0 R >>"
LINKS_4 = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Annots [4 0 R] >>"


def _refusal(data: bytes) -> str:
    with pytest.raises(ValidationFailed) as caught:
        file_check.check_bytes(data)
    assert list(caught.value.fields) == ["file"]
    return caught.value.fields["file"]


@pytest.mark.parametrize("compressed", [False, True], ids=["xref-table", "object-stream"])
def test_clean_pdf_is_accepted_and_kept_byte_for_byte(compressed):
    data = pdf(compressed=compressed)
    checked = file_check.check_bytes(data)
    assert (checked.kind, checked.read()) == (files.PDF, data)
    assert file_check.check_bytes(sample_files.pdf()).read() == sample_files.pdf()


def test_pdf_whose_open_action_only_shows_a_page_is_accepted():
    catalog = b"<< /Type /Catalog /Pages 2 0 R /OpenAction [3 0 R /Fit] >>"
    assert file_check.check_bytes(pdf(catalog=catalog, compressed=True)).kind is files.PDF
    goto = pdf([b"<< /S /GoTo /D [3 0 R /Fit] >>"], catalog=OPENS_4, compressed=False)
    assert file_check.check_bytes(goto).kind is files.PDF


def test_pdf_with_hex_escaped_javascript_names_is_refused():
    data = pdf([b"<< /S /J#61vaScript /J#53 (app.alert(1)) >>"], catalog=OPENS_4, compressed=False)
    assert b"JavaScript" not in data
    assert _refusal(data) == pdf_check.ACTIVE_MESSAGE


def test_pdf_with_javascript_inside_a_compressed_object_stream_is_refused():
    # Not referenced from anywhere a viewer starts: only walking every object finds it.
    data = pdf([b"<< /Names << /JavaScript << /Names [(a) << /S /JavaScript /JS (x) >>] >> >> >>"], compressed=True)
    assert b"JavaScript" not in data and b"/JS" not in data
    assert _refusal(data) == pdf_check.ACTIVE_MESSAGE


@pytest.mark.parametrize(
    "action",
    [
        b"<< /S /Launch /F (cmd.exe) >>",
        b"<< /S /SubmitForm /F << /FS /URL /F (https://example.invalid/) >> >>",
        b"<< /S /ImportData /F (data.fdf) >>",
        b"<< /S /ResetForm >>",
        b"<< /S /GoToR /F (other.pdf) /D [0 /Fit] >>",
        b"<< /S /GoToE /T << /R /C /N (a) >> >>",
        b"<< /S /Named /N /Print /Next << /S /JavaScript /JS (x) >> >>",
        b"<< /S /Named /N /Print >>",
        b"<< /S /Hide /T (field) >>",
        b"<< /S /SetOCGState /State [/OFF] >>",
        b"<< /S /Rendition /OP 0 >>",
        b"<< /S /RichMediaExecute /TA 5 0 R >>",
        b"<< /S /URI /URI (javascript:app.alert(1)) >>",
        b"<< /S /URI /URI (JavaScript:app.alert(1)) >>",
        b"<< /S /URI /URI (file:///etc/passwd) >>",
        b"<< /S /URI /URI (file://server/share/x.exe) >>",
        b"<< /S /URI /URI (data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==) >>",
        b"<< /S /URI /URI ( https://example.org/) >>",
        b"<< /S /URI /URI (java\tscript:alert(1)) >>",
        b"<< /S /URI /URI (report.html) >>",
        b"<< /S /URI /URI (https:///no-host) >>",
        b"<< /S /URI /URI (smb://server/share) >>",
        b"<< /S /URI /URI <feff00680074007400700073003a002f002f0061002e006f0072006700> >>",
        b"<< /S /URI /URI 5 0 R >>",
        b"<< /S /URI /URI (https://example.org/) /Next << /S /JavaScript /JS (x) >> >>",
        b"<< /S /URI /URI (https://example.org/) /Next [<< /S /GoTo /D [3 0 R /Fit] >> << /S /Launch >>] >>",
        b"<< /S /GoTo /D [3 0 R /Fit] /Next 5 0 R >>",
        b"<< /S /URI /URI (https://example.org/) /JS (x) >>",
    ],
    ids=[
        "launch", "submit-form", "import-data", "reset-form", "goto-remote", "goto-embedded", "chained-script",
        "named", "hide", "set-ocg-state", "rendition", "rich-media-execute", "javascript-uri",
        "javascript-uri-capitals", "file-uri", "file-uri-share", "data-uri", "leading-space", "tab-in-scheme",
        "relative", "http-without-host", "smb", "utf16-text", "indirect-javascript-uri", "uri-then-script",
        "uri-then-launch-in-a-list", "goto-then-indirect-javascript-uri",
        "uri-with-script-key",
    ],
)  # fmt: skip
@pytest.mark.parametrize("compressed", [False, True], ids=["xref-table", "object-stream"])
def test_pdf_with_an_active_link_action_is_refused(action, compressed):
    annotation = b"<< /Type /Annot /Subtype /Link /Rect [0 0 10 10] /A " + action + b" >>"
    # Object 5, for the actions that name it: a script address, or a script action.
    fifth = b"<< /S /URI /URI (javascript:alert(1)) >>" if b"/GoTo " in action else b"(javascript:alert(1))"
    data = pdf([annotation, fifth], page=LINKS_4, compressed=compressed)
    assert _refusal(data) == pdf_check.ACTIVE_MESSAGE


WEB_LINKS = [
    b"https://lab.example.org/results?id=42&view=full#top",
    b"http://example.org",
    b"HTTPS://EXAMPLE.ORG/X",
    b"mailto:lab@example.org?subject=Results",
]


@pytest.mark.parametrize("address", WEB_LINKS, ids=["https", "http", "capitals", "mailto"])
@pytest.mark.parametrize("compressed", [False, True], ids=["xref-table", "object-stream"])
def test_pdf_with_a_web_or_mail_link_is_accepted_and_kept_byte_for_byte(address, compressed):
    annotation = b"<< /Type /Annot /Subtype /Link /Rect [0 0 10 10] /A << /S /URI /URI (" + address + b") >> >>"
    data = pdf([annotation], page=LINKS_4, compressed=compressed)
    assert file_check.check_bytes(data).read() == data


def test_pdf_with_links_as_browsers_and_pypdf_write_them_is_accepted():
    # An action of its own object, its address too, a /Type /Action, an outline entry and a page link beside it.
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Annots [4 0 R 7 0 R] >>"
    link = b"<< /Type /Annot /Subtype /Link /Rect [0 0 10 10] /Border [0 0 0] /A 5 0 R >>"
    action = b"<< /Type /Action /S /URI /URI 6 0 R >>"
    inner = b"<< /Type /Annot /Subtype /Link /Rect [0 20 10 30] /A << /S /GoTo /D [3 0 R /XYZ 0 0 0] >> >>"
    data = pdf([link, action, b"(https://lab.example.org/letter/42)", inner], page=page, compressed=True)
    assert file_check.check_bytes(data).kind is files.PDF
    writer = PdfWriter()
    writer.add_blank_page(200, 200)
    writer.add_annotation(0, Link(rect=(10, 10, 100, 20), url="https://lab.example.org/results"))
    writer.add_outline_item(title="Results", page_number=0)
    out = io.BytesIO()
    writer.write(out)
    assert file_check.check_bytes(out.getvalue()).kind is files.PDF


@pytest.mark.parametrize(
    "catalog",
    [
        b"<< /Type /Catalog /Pages 2 0 R /OpenAction << /S /URI /URI (https://tracker.example/) >> >>",
        b"<< /Type /Catalog /Pages 2 0 R /AA << /WC << /S /URI /URI (https://tracker.example/) >> >> >>",
        b"<< /Type /Catalog /Pages 2 0 R /URI << /Base (https://example.org/) >> >>",
        b"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [<< /FT /Btn /T (b) /A << /S /SubmitForm >> >>] >> >>",
        b"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [] /XFA (x) >> >>",
        b"<< /Type /Catalog /Pages 2 0 R /Outlines << /First << /Title (a) /A << /S /Launch >> >> >> >>",
    ],
    ids=["open-action-link", "additional-action-link", "base-uri", "form-submit", "xfa", "outline-launch"],
)
def test_pdf_whose_document_level_entries_act_or_reach_out_by_themselves_is_refused(catalog):
    assert _refusal(pdf(catalog=catalog, compressed=True)) == pdf_check.ACTIVE_MESSAGE


@pytest.mark.parametrize("compressed", [False, True], ids=["xref-table", "object-stream"])
def test_pdf_with_an_embedded_file_is_refused(compressed):
    catalog = b"<< /Type /Catalog /Pages 2 0 R /Names << /EmbeddedFiles 4 0 R >> >>"
    names = b"<< /Names [(a.exe) << /Type /Filespec /F (a.exe) >>] >>"
    assert _refusal(pdf([names], catalog=catalog, compressed=compressed)) == pdf_check.ACTIVE_MESSAGE


def test_pdf_with_additional_actions_is_refused():
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /AA << /O << /S /Named /N /Print >> >> >>"
    assert _refusal(pdf(page=page, compressed=True)) == pdf_check.ACTIVE_MESSAGE


def test_pdf_whose_open_action_does_more_than_show_a_page_is_refused():
    data = pdf([b"<< /S /Named /N /Print >>"], catalog=OPENS_4, compressed=True)
    assert _refusal(data) == pdf_check.ACTIVE_MESSAGE


def test_pdf_written_by_pypdf_with_javascript_is_refused():
    writer = PdfWriter()
    writer.add_blank_page(100, 100)
    writer.add_open_action(JavaScript("app.alert('x');"))
    out = io.BytesIO()
    writer.write(out)
    assert _refusal(out.getvalue()) == pdf_check.ACTIVE_MESSAGE


@pytest.mark.parametrize(
    "data",
    [
        b"%PDF-1.4\n1 0 obj\n",
        b"%PDF-1.4\nnot a pdf at all\n%%EOF\n",
        b"%PDF-1.5\n" + b"\x00" * 200 + b"\n%%EOF\n",
        pdf(compressed=True).replace(b"/FlateDecode", b"/LZWDecode", 1),
        pdf(compressed=False).replace(b"/Pages 2 0 R", b"/Pages 9 0 R"),
    ],
    ids=["truncated", "garbage", "zeros", "wrong-filter", "no-pages"],
)
def test_malformed_pdf_is_refused_as_unreadable(data):
    assert "PDF" in _refusal(data)


def test_pdf_with_data_after_its_end_is_refused():
    assert "after its end" in _refusal(pdf(compressed=False) + b"\n" * 2000 + b"MZ\x90\x00 hidden program\n")


def test_pdf_with_a_zip_directory_is_refused_as_polyglot():
    data = pdf(compressed=False).replace(b"%%EOF", b"%PK\x05\x06" + b"\x00" * 18 + b"\n%%EOF")
    assert "archive" in _refusal(data)


def test_pdf_that_a_browser_would_sniff_as_a_page_is_refused():
    data = pdf(compressed=False).replace(b"%\xe2\xe3\xcf\xd3", b"%<html><script>alert(1)</script>")
    assert "web content" in _refusal(data)


def test_password_protected_pdf_is_refused_and_one_with_only_an_owner_password_is_read():
    for user_password, accepted in (("secret", False), ("", True)):
        writer = PdfWriter()
        writer.add_blank_page(100, 100)
        writer.encrypt(user_password=user_password, owner_password="owner", algorithm="RC4-128")
        out = io.BytesIO()
        writer.write(out)
        if accepted:
            assert file_check.check_bytes(out.getvalue()).kind is files.PDF
        else:
            assert "Password" in _refusal(out.getvalue())
    assert PdfReader(io.BytesIO(out.getvalue())).is_encrypted


# --- images -----------------------------------------------------------------------------------------------------


def test_clean_png_and_jpeg_are_accepted_and_stay_the_same_picture():
    for data, kind in ((images.screenshot(), files.PNG), (images.photo(), files.JPEG)):
        checked = file_check.check_bytes(data)
        assert checked.kind is kind
        stored, original = Image.open(io.BytesIO(checked.read())), Image.open(io.BytesIO(data))
        assert (stored.format, stored.size, stored.mode) == (original.format, original.size, original.mode)
    png = file_check.check_bytes(images.screenshot()).read()
    assert Image.open(io.BytesIO(png)).tobytes() == Image.open(io.BytesIO(images.screenshot())).tobytes()


def test_jpeg_exif_gps_and_comment_are_stripped():
    data = images.photo()
    assert b"SecretCam" in data and b"Jane Roe" in data
    stored = file_check.check_bytes(data).read()
    assert b"SecretCam" not in stored and b"Jane Roe" not in stored and b"Exif" not in stored
    assert not Image.open(io.BytesIO(stored)).getexif()


def test_jpeg_orientation_is_applied_to_the_pixels_before_exif_is_dropped():
    stored = Image.open(io.BytesIO(file_check.check_bytes(images.photo(size=(64, 32), orientation=6)).read()))
    assert stored.size == (32, 64) and not stored.getexif()


def test_jpeg_colour_profile_is_applied_not_kept():
    data = images.photo(icc=True)
    assert Image.open(io.BytesIO(data)).info.get("icc_profile")
    assert "icc_profile" not in Image.open(io.BytesIO(file_check.check_bytes(data).read())).info


def test_png_text_and_exif_chunks_are_stripped():
    data = images.screenshot(text={"Comment": "<script>alert(1)</script>", "Author": "Jane Roe"})
    stored = file_check.check_bytes(data).read()
    assert b"<script>" not in stored and b"Jane Roe" not in stored and b"SecretCam" not in stored
    assert b"tEXt" not in stored and b"eXIf" not in stored


@pytest.mark.parametrize("make", [images.screenshot, images.photo], ids=["png", "jpeg"])
def test_bytes_appended_after_an_image_are_gone(make):
    # HTML well past the first 4 KiB, and a ZIP: neither survives re-encoding.
    tail = b"\x00" * 5000 + b"<html><script>alert(1)</script></html>" + b"PK\x05\x06" + b"\x00" * 18
    stored = file_check.check_bytes(make() + tail).read()
    assert stored == file_check.check_bytes(make()).read()
    assert b"<script>" not in stored and b"PK\x05\x06" not in stored


def test_html_hidden_deep_inside_a_png_is_gone():
    padding = {f"k{i}": "x" * 1000 for i in range(6)}
    data = images.screenshot(text={**padding, "late": "<html><script>alert(1)</script></html>"})
    assert data.index(b"<html>") > 4096
    assert b"<html>" not in file_check.check_bytes(data).read()


def test_decompression_bomb_is_refused_before_decoding():
    bomb = images.png_bomb(8000, 8000)  # 64 megapixels in a few kilobytes
    assert len(bomb) < 16 * 1024
    assert "too many pixels" in _refusal(bomb)
    assert "too many pixels" in _refusal(images.png_bomb(20000, 20000))


def test_an_image_whose_decoded_size_exceeds_the_budget_is_refused_unless_it_is_a_jpeg():
    zeros = images.png_bomb(6300, 6300, rgba=True)  # under 40 megapixels, 159 MB once decoded
    assert len(zeros) < 200 * 1024
    refusal = _refusal(zeros)
    assert "too large to check (6300×6300; at most 64 MB once decoded)" in refusal


def test_a_jpeg_over_the_budget_is_decoded_reduced_and_stored_smaller():
    photo = images.large_jpeg(7200, 5400)  # 39 megapixels: 156 MB decoded at full size
    stored = Image.open(io.BytesIO(file_check.check_bytes(photo).read()))
    assert stored.size == (3600, 2700)  # the decoder's 1/2 scaling: the full size was never in memory
    assert image_check.decoded_bytes(stored.size, stored.mode) <= image_check.DECODE_BUDGET_BYTES


@pytest.mark.parametrize(
    "data",
    [images.large_jpeg(4000, 3000), images.png_bomb(3840, 2160, rgba=True)],
    ids=["12-megapixel-photo", "4k-screenshot-with-transparency"],
)
def test_normal_photos_and_screenshots_fit_the_budget_and_keep_their_size(data):
    original = Image.open(io.BytesIO(data)).size
    assert Image.open(io.BytesIO(file_check.check_bytes(data).read())).size == original


def test_the_budget_counts_the_bytes_pillow_keeps_per_pixel():
    assert [image_check.pixel_bytes(m) for m in ("1", "L", "P", "I;16", "RGB", "RGBA", "CMYK")] == [1, 1, 1, 2, 4, 4, 4]
    assert image_check.decoded_bytes((6300, 6300), "RGBA") == 158_760_000


def test_image_at_the_pixel_limit_is_accepted():
    side = int(image_check.MAX_PIXELS**0.5)
    assert file_check.check_bytes(images.png_bomb(side, side)).kind is files.PNG


@pytest.mark.parametrize(
    "data",
    [images.photo()[:400], images.screenshot()[:60], sample_files.png()[:40] + b"\x00" * 40],
    ids=["truncated-jpeg", "truncated-png", "broken-png"],
)
def test_damaged_image_is_refused(data):
    assert "could not be read" in _refusal(data)
