"""Which values an action sends."""

from __future__ import annotations

import pytest

from doctordesk.client.forms import FileUpload, collect, encode_value, find_input

TREE = [
    {
        "id": "modal",
        "ref": "modal",
        "type": "Modal",
        "children": [
            {"id": "reason", "ref": "reason", "type": "Edit", "name": "reason", "value": "Away"},
            {"id": "hidden", "ref": "hidden", "type": "Hidden", "name": "appointment-id", "value": 7},
        ],
    },
    {"id": "content", "ref": "content", "type": "Edit", "name": "content"},
    {"id": "off", "ref": "off", "type": "Edit", "name": "off", "value": "x", "enabled": False},
    {"id": "upload", "ref": "upload", "type": "Upload", "name": "file"},
]


def test_a_form_sends_only_the_inputs_inside_it() -> None:
    assert collect(TREE, "modal", {}) == ({"reason": "Away", "appointment-id": "7"}, {})


def test_no_form_sends_every_enabled_input_of_the_page_and_the_chosen_file() -> None:
    data, files = collect(TREE, None, {"file": FileUpload("a.png", b"\x89PNG", "image/png")})
    assert data == {"reason": "Away", "appointment-id": "7", "content": ""}
    assert files == {"file": ("a.png", b"\x89PNG", "image/png")}


def test_a_form_that_is_not_on_the_page_is_an_error() -> None:
    with pytest.raises(KeyError):
        collect(TREE, "elsewhere", {})


def test_values_are_encoded_as_a_form_would_send_them() -> None:
    assert [encode_value(v) for v in (None, True, False, 3, "a b")] == ["", "true", "false", "3", "a b"]


def test_inputs_are_found_by_name_before_id() -> None:
    assert find_input(TREE, "appointment-id")["id"] == "hidden"
    assert find_input(TREE, "upload")["name"] == "file"
    assert find_input(TREE, "missing") is None


def test_a_file_upload_reads_a_path_and_guesses_its_type(tmp_path) -> None:
    path = tmp_path / "report.pdf"
    path.write_bytes(b"%PDF")
    assert FileUpload.from_path(path) == FileUpload("report.pdf", b"%PDF", "application/pdf")
