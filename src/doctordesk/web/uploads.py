"""Reading a send-message form while it streams in: text fields and at most one file, each within its limit.

The file goes straight into a temporary file as it arrives (the first ``SPOOL_BYTES`` in memory, the rest on
disk), so an upload is held in memory once at most, and only when it is small. Bytes are counted as they come:
the chunk that crosses the upload limit stops the read and the request is answered 413 at once, before the rest
of the body is accepted. A declared Content-Length over the limit is refused before any of the body is read. The
temporary file is unnamed and deleted when closed: on a refusal at once, otherwise when the request is done
(``ReceivedForm.close``). Only the field ``file`` may carry a file.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from tempfile import SpooledTemporaryFile
from typing import IO
from urllib.parse import parse_qsl

from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.requests import Request

from doctordesk.domain.errors import PayloadTooLarge, ValidationFailed
from doctordesk.domain.files.attachments import FIELD as FILE_FIELD
from doctordesk.domain.inputs import parse_int
from doctordesk.domain.texts import N_, Text

MAX_PARTS = 16
MAX_SMALL_FIELD_BYTES = 256
HEADROOM_BYTES = 16 * 1024  # multipart boundaries and part headers
# Files up to this size stay in memory; larger ones go to disk as they arrive.
SPOOL_BYTES = 256 * 1024
MAX_NAME_CHARS = 64


def size_text(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):g} MiB"
    return f"{size / 1024:g} KiB" if size >= 1024 else Text("{count} bytes", count=size)


@dataclass
class ReceivedFile:
    filename: str | None
    declared_type: str | None
    file: IO[bytes]
    size: int


@dataclass
class ReceivedForm:
    fields: dict[str, str] = field(default_factory=dict)
    file: ReceivedFile | None = None

    def close(self) -> None:
        """Delete the temporary file, if any."""
        if self.file is not None:
            self.file.file.close()


@dataclass
class _Part:
    headers: dict[str, bytes] = field(default_factory=dict)
    name: str = ""
    filename: str | None = None
    data: bytearray = field(default_factory=bytearray)  # text fields only
    spool: SpooledTemporaryFile[bytes] | None = None  # file parts only
    pending: bytearray = field(default_factory=bytearray)  # file bytes parsed, not yet in the spool
    size: int = 0


async def _flush(parts: list[_Part]) -> None:
    """Move parsed file bytes into their temporary file: in memory while it is small, through a thread once it is
    on disk (file writes do not run on the event loop)."""
    for part in parts:
        if part.spool is None or not part.pending:
            continue
        data = bytes(part.pending)
        part.pending.clear()
        if part.size <= SPOOL_BYTES:
            part.spool.write(data)
        else:
            await asyncio.to_thread(part.spool.write, data)


class FormReader:
    """Limits: ``max_file_bytes`` for the one file, ``max_text_bytes`` for the ``content`` field, small limits
    for every other field, ``MAX_PARTS`` parts."""

    def __init__(self, *, max_file_bytes: int, max_text_bytes: int) -> None:
        self.max_file_bytes = max_file_bytes
        self.max_text_bytes = max_text_bytes

    @property
    def max_body_bytes(self) -> int:
        return self.max_file_bytes + self.max_text_bytes + MAX_PARTS * MAX_SMALL_FIELD_BYTES + HEADROOM_BYTES

    async def read(self, request: Request) -> ReceivedForm:
        declared = request.headers.get("content-length")
        size = parse_int(declared, minimum=0, maximum=10**18)
        if size is not None and size > self.max_body_bytes:
            raise PayloadTooLarge(Text("The file is larger than {size}.", size=size_text(self.max_file_bytes)))
        content_type, options = parse_options_header(request.headers.get("content-type", ""))
        if content_type == b"multipart/form-data":
            boundary = options.get(b"boundary")
            if not boundary:
                raise ValidationFailed(fields={"request": N_("The multipart body has no boundary.")})
            return await self._multipart(request, boundary)
        if content_type == b"application/x-www-form-urlencoded":
            return await self._urlencoded(request)
        raise ValidationFailed(
            fields={"request": N_("Send multipart/form-data (with a file) or application/x-www-form-urlencoded.")}
        )

    def _field_limit(self, name: str) -> int:
        return self.max_text_bytes if name == "content" else MAX_SMALL_FIELD_BYTES

    async def _urlencoded(self, request: Request) -> ReceivedForm:
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > 3 * self.max_text_bytes + MAX_PARTS * MAX_SMALL_FIELD_BYTES:
                raise ValidationFailed(fields={"content": N_("The message is too long.")})
        try:
            pairs = parse_qsl(bytes(body).decode("utf-8"), keep_blank_values=True, max_num_fields=MAX_PARTS)
        except (UnicodeDecodeError, ValueError):
            raise ValidationFailed(fields={"request": N_("The form could not be read.")}) from None
        form = ReceivedForm()
        for name, value in pairs:
            if len(value.encode()) > self._field_limit(name):
                raise ValidationFailed(fields={name: N_("Too long.")})
            form.fields.setdefault(name, value)
        return form

    async def _multipart(self, request: Request, boundary: bytes) -> ReceivedForm:
        parts: list[_Part] = []
        try:
            await self._parse(request, boundary, parts)
            return self._form(parts)
        except BaseException:
            for part in parts:
                if part.spool is not None:
                    part.spool.close()
            raise

    async def _parse(self, request: Request, boundary: bytes, parts: list[_Part]) -> None:
        header_name = bytearray()
        header_value = bytearray()
        files_seen: list[_Part] = []

        def part_begin() -> None:
            if len(parts) >= MAX_PARTS:
                raise ValidationFailed(fields={"request": Text("At most {count} form fields.", count=MAX_PARTS)})
            parts.append(_Part())

        def header_field(data: bytes, start: int, end: int) -> None:
            header_name.extend(data[start:end])

        def header_value_cb(data: bytes, start: int, end: int) -> None:
            header_value.extend(data[start:end])

        def header_end() -> None:
            parts[-1].headers[header_name.decode("latin-1").lower()] = bytes(header_value)
            header_name.clear()
            header_value.clear()

        def headers_finished() -> None:
            part = parts[-1]
            disposition, params = parse_options_header(part.headers.get("content-disposition", b""))
            if disposition != b"form-data" or b"name" not in params:
                raise ValidationFailed(fields={"request": N_("Every part needs a form-data name.")})
            part.name = params[b"name"].decode("utf-8", "replace")
            if b"filename" in params:
                if part.name != FILE_FIELD:
                    name = part.name[:MAX_NAME_CHARS] or "request"
                    raise ValidationFailed(
                        fields={name: Text("Only the field '{field}' may carry a file.", field=FILE_FIELD)}
                    )
                part.filename = params[b"filename"].decode("utf-8", "replace")
                if part.filename and files_seen:
                    raise ValidationFailed(fields={FILE_FIELD: N_("At most one file per message.")})
                part.spool = SpooledTemporaryFile(max_size=SPOOL_BYTES)

        def part_end() -> None:
            part = parts[-1]
            # Browsers send an empty, nameless file part when no file was chosen: that is no file.
            if part.filename is not None and (part.filename or part.size):
                if files_seen:
                    raise ValidationFailed(fields={FILE_FIELD: N_("At most one file per message.")})
                files_seen.append(part)

        def part_data(data: bytes, start: int, end: int) -> None:
            part = parts[-1]
            if part.spool is not None:
                part.size += end - start
                if part.size > self.max_file_bytes:
                    raise PayloadTooLarge(Text("The file is larger than {size}.", size=size_text(self.max_file_bytes)))
                part.pending.extend(data[start:end])
                return
            part.data.extend(data[start:end])
            if len(part.data) > self._field_limit(part.name):
                if part.name == "content":
                    raise ValidationFailed(fields={"content": N_("The message is too long.")})
                raise ValidationFailed(fields={part.name: N_("Too long.")})

        parser = MultipartParser(
            boundary,
            {
                "on_part_begin": part_begin,
                "on_header_field": header_field,
                "on_header_value": header_value_cb,
                "on_header_end": header_end,
                "on_headers_finished": headers_finished,
                "on_part_data": part_data,
                "on_part_end": part_end,
            },
        )
        try:
            async for chunk in request.stream():
                parser.write(chunk)
                await _flush(parts)
            parser.finalize()
            await _flush(parts)
        except MultipartParseError:
            raise ValidationFailed(fields={"request": N_("The multipart body could not be read.")}) from None

    @staticmethod
    def _form(parts: list[_Part]) -> ReceivedForm:
        form = ReceivedForm()
        for part in parts:
            if part.spool is not None:
                if form.file is None and (part.filename or part.size):
                    declared = part.headers.get("content-type")
                    part.spool.seek(0)
                    form.file = ReceivedFile(
                        part.filename, declared.decode("latin-1") if declared else None, part.spool, part.size
                    )
                else:
                    part.spool.close()
                continue
            if part.name == FILE_FIELD:
                if part.data:
                    raise ValidationFailed(fields={FILE_FIELD: N_("Send the file as a file part.")})
                continue
            try:
                form.fields.setdefault(part.name, part.data.decode("utf-8"))
            except UnicodeDecodeError:
                raise ValidationFailed(fields={part.name: N_("Not valid UTF-8 text.")}) from None
        return form
