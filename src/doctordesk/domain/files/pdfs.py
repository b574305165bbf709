"""PDF checking with a real parser (pypdf): every object of the document is read, and a document that can act on
its own (scripts, launches, embedded files, forms that send, actions other than a link) is refused
(docs/chat.md#files)."""

from __future__ import annotations

import os
from typing import IO, Any
from urllib.parse import urlsplit

from pypdf import PdfReader
from pypdf.generic import (
    ArrayObject,
    ByteStringObject,
    DictionaryObject,
    IndirectObject,
    NameObject,
    TextStringObject,
)

from doctordesk.domain.errors import DomainError
from doctordesk.domain.files.attachments import refuse
from doctordesk.domain.texts import N_

ACTIVE_NAMES = frozenset(
    {
        "/JavaScript",
        "/JS",
        "/Launch",
        "/EmbeddedFile",
        "/EmbeddedFiles",
        "/SubmitForm",
        "/ImportData",
        "/ResetForm",
        "/GoToR",
        "/GoToE",
        "/GoTo3DView",
        "/RichMedia",
        "/RichMediaExecute",
        "/Rendition",
        "/Movie",
        "/Sound",
        "/XFA",
        "/AA",
    }
)
URI = "/URI"
# The actions a document may hold: show one of its pages, open a web or e-mail address when clicked.
ALLOWED_ACTIONS = frozenset({"/GoTo", URI})
# The keys whose value is an action (or, for ``/Next``, a list of them).
ACTION_KEYS = frozenset({"/A", "/Next"})
LINK_SCHEMES = frozenset({"http", "https", "mailto"})
MAX_LINK_CHARS = 2048
# A ZIP reader looks for its end-of-central-directory record in the last 22 bytes plus at most a 64 KiB comment.
ZIP_TAIL_BYTES = 22 + 65535
ZIP_DIRECTORY_END = b"PK\x05\x06"
HEAD_BYTES = 1024
# Markup that makes a browser sniff the file as a page (it reads the first bytes only).
_WEB_MARKERS = (b"<script", b"<html", b"<svg", b"<iframe", b"<?php", b"<body")

ACTIVE_MESSAGE = N_(
    "PDFs with scripts, launch actions, embedded files or links other than web and e-mail addresses are refused."
)
UNREADABLE_MESSAGE = N_("The PDF could not be read: it is damaged or not a PDF.")


def check_pdf(stream: IO[bytes]) -> None:
    """Raise ValidationFailed unless ``stream`` holds a readable PDF with nothing active in it."""
    _check_edges(stream)
    stream.seek(0)
    try:
        reader = PdfReader(stream, strict=False)
        if reader.is_encrypted and not _open_without_password(reader):
            raise refuse(N_("Password-protected PDFs cannot be checked and are refused."))
        if len(reader.pages) < 1:
            raise refuse(UNREADABLE_MESSAGE)
        found = _active_name(reader)
    except DomainError:
        raise
    except Exception:
        # A parser of untrusted bytes may fail in many ways (damaged streams, loops, recursion): all mean the
        # document cannot be checked.
        raise refuse(UNREADABLE_MESSAGE) from None
    if found:
        raise refuse(ACTIVE_MESSAGE)


def _check_edges(stream: IO[bytes]) -> None:
    stream.seek(0, os.SEEK_END)
    size = stream.tell()
    stream.seek(0)
    head = stream.read(HEAD_BYTES).lower()
    if any(marker in head for marker in _WEB_MARKERS):
        raise refuse(N_("The file also contains web content and is refused."))
    stream.seek(max(0, size - ZIP_TAIL_BYTES))
    tail = stream.read()
    end = tail.rfind(b"%%EOF")
    if end < 0:
        raise refuse(N_("The PDF is incomplete, damaged or has data after its end."))
    if tail[end + 5 :].strip(b"\r\n\t\x0c \x00"):
        raise refuse(N_("The PDF has data after its end and is refused."))
    if ZIP_DIRECTORY_END in tail:
        raise refuse(N_("The file also contains an archive and is refused."))


def _open_without_password(reader: PdfReader) -> bool:
    """Documents restricted by an owner password only open with the empty user password."""
    try:
        return bool(reader.decrypt(""))
    except Exception:
        return False


def _active_name(reader: PdfReader) -> bool:
    """Whether any object of the document names an active feature (objects in object streams included)."""
    if _walk(reader.trailer):
        return True
    numbers: set[tuple[int, int]] = set()
    for generation, table in reader.xref.items():
        numbers.update((number, generation) for number in table)
    numbers.update((number, 0) for number in reader.xref_objStm)
    for number, generation in sorted(numbers):
        if number == 0:
            continue
        value = reader.get_object(IndirectObject(number, generation, reader))
        if _walk(value):
            return True
    return _open_action_is_active(reader.root_object.get("/OpenAction"))


def _walk(value: Any) -> bool:
    """Whether this object, or any direct object inside it, is active. Indirect references are not followed for
    the walk (every indirect object is walked on its own), only to read what an action or a link names."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, NameObject):
            if item in ACTIVE_NAMES or item == URI:
                return True
        elif isinstance(item, DictionaryObject):
            link = _resolved(item.get("/S")) == URI
            if link and not _is_web_link(item.get(URI)):
                return True
            if item.get("/Type") == "/Action" and not _allowed_action(item):
                return True
            for key, inner in item.items():
                if key in ACTIVE_NAMES or (key == URI and not link):
                    return True
                if key in ACTION_KEYS and not all(_allowed_action(action) for action in _actions(inner)):
                    return True
                if link and key in ("/S", URI):
                    continue  # the link's own names, checked above
                if not isinstance(inner, IndirectObject):
                    stack.append(inner)
        elif isinstance(item, ArrayObject):
            stack.extend(inner for inner in item if not isinstance(inner, IndirectObject))
    return False


def _resolved(value: Any) -> Any:
    return value.get_object() if isinstance(value, IndirectObject) else value


def _actions(value: Any) -> list[Any]:
    """The actions an ``/A`` or ``/Next`` entry names (one, or a list of them)."""
    value = _resolved(value)
    if isinstance(value, ArrayObject):
        return [_resolved(inner) for inner in value]
    return [value]


def _allowed_action(action: Any) -> bool:
    """A page of this document, or a link to a web or e-mail address; anything else that is not an action
    dictionary is left to the walk (``/A`` also names other things, e.g. a measure's number formats)."""
    if not isinstance(action, DictionaryObject):
        return not isinstance(action, NameObject)
    kind = _resolved(action.get("/S"))
    if kind not in ALLOWED_ACTIONS:
        return False
    return kind != URI or _is_web_link(action.get(URI))


def _is_web_link(value: Any) -> bool:
    """An absolute ``http``/``https`` address with a host, or a ``mailto`` address: printable ASCII, no spaces."""
    value = _resolved(value)
    if not isinstance(value, (TextStringObject, ByteStringObject)):
        return False
    raw = value.original_bytes if isinstance(value, TextStringObject) else bytes(value)
    if not raw or len(raw) > MAX_LINK_CHARS or any(byte <= 0x20 or byte >= 0x7F for byte in raw):
        return False
    try:
        address = urlsplit(raw.decode("ascii"))
    except ValueError:
        return False
    if address.scheme.lower() not in LINK_SCHEMES:
        return False
    if address.scheme.lower() == "mailto":
        return bool(address.path)
    return bool(address.hostname)


def _open_action_is_active(action: Any) -> bool:
    """An open action may show a page (a destination array or ``/S /GoTo``); anything else acts on opening."""
    if action is None:
        return False
    action = action.get_object()
    if isinstance(action, ArrayObject):
        return False
    if isinstance(action, DictionaryObject):
        return action.get("/S") != "/GoTo" or "/Next" in action
    return True
