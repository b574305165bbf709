"""Form handling of the generic client: which values an action sends (docs/protocol.md, "Actions").

Every enabled element with a ``name`` inside the action's ``form`` element (the whole page when the action names
none) is sent: text-like inputs as typed, a Checkbox as ``true``/``false``, an Upload as the file set on it
(multipart). Pure functions over the page's JSON element tree.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from doctordesk.screens.protocol import walk


@dataclass(frozen=True, slots=True)
class FileUpload:
    """A file to send with an Upload element."""

    filename: str
    content: bytes
    content_type: str = "application/octet-stream"

    @classmethod
    def from_path(cls, path: str | Path, *, content_type: str | None = None) -> FileUpload:
        """Read a file from disk (its type guessed from the name unless given)."""
        p = Path(path)
        guessed = content_type or mimetypes.guess_type(p.name)[0] or "application/octet-stream"
        return cls(p.name, p.read_bytes(), guessed)


FormFiles = dict[str, tuple[str, bytes, str]]


def find(elements: Iterable[dict[str, Any]], element_id: str) -> dict[str, Any] | None:
    """The element with this id anywhere in the tree, or None."""
    return next((e for e in walk(elements) if e.get("id") == element_id), None)


def find_input(elements: Iterable[dict[str, Any]], name_or_id: str) -> dict[str, Any] | None:
    """The input with this form ``name`` (first match), else the element with this ``id``."""
    tree = list(elements)
    by_name = next((e for e in walk(tree) if e.get("name") == name_or_id), None)
    return by_name if by_name is not None else find(tree, name_or_id)


def encode_value(value: Any) -> str:
    """The form encoding of one element value."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def collect(
    elements: Iterable[dict[str, Any]],
    form: str | None,
    files: Mapping[str, FileUpload],
) -> tuple[dict[str, str], FormFiles]:
    """The fields and files an action with this ``form`` sends; ``files`` holds the files set on Uploads, by name.

    Raises ``KeyError`` when ``form`` names no element of the page.
    """
    tree = list(elements)
    scope: list[dict[str, Any]]
    if form is None:
        scope = tree
    else:
        container = find(tree, form)
        if container is None:
            raise KeyError(f"the action's form {form!r} is not on the page")
        scope = [container]
    data: dict[str, str] = {}
    upload: FormFiles = {}
    for e in walk(scope):
        name = e.get("name")
        if not name or not e.get("enabled", True):
            continue
        if e.get("type") == "Upload":
            chosen = files.get(name)
            if chosen is not None:
                upload[name] = (chosen.filename, chosen.content, chosen.content_type)
            continue
        data[name] = encode_value(e.get("value"))
    return data, upload
