"""Running the file checks (``domain/files/check.py``) off the event loop, and keeping the memory uploads take
bounded.

Parsing a PDF or decoding an image is CPU work that can take a second and, for a large photo, a hundred megabytes
while the pixels are decoded. The checks run in their own small pool of threads, so the event loop keeps serving
other requests and uploads arriving together are checked ``CONCURRENT_CHECKS`` at a time (the others wait their
turn in the pool's queue) instead of decoding every photo at once. A re-encoded image goes to a temporary file,
like the upload itself.

Attachments are stored in the database, so a file's bytes must be in memory while it is inserted (and the driver
copies them once more). ``storing()`` lets ``CONCURRENT_STORES`` sends hold them at a time; the bytes are read from
the temporary file inside it and released when the row is written.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import weakref
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from tempfile import SpooledTemporaryFile
from typing import IO

from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.files.check import CheckedFile, check

CONCURRENT_CHECKS = 2
CONCURRENT_STORES = 2
SPOOL_BYTES = 256 * 1024
_POOL = ThreadPoolExecutor(max_workers=CONCURRENT_CHECKS, thread_name_prefix="file-check")
# One gate per event loop (an asyncio semaphore belongs to the loop that first waits on it).
_GATES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


async def check_upload(stream: IO[bytes]) -> CheckedFile | ValidationFailed:
    """The checked file, or the refusal (returned, not raised, so the caller decides when it counts: after the
    access and chat rules, as for any other invalid field). The checked file's stream is ``stream`` or a new
    temporary file: the caller closes both."""
    loop = asyncio.get_running_loop()
    reencoded: SpooledTemporaryFile[bytes] = SpooledTemporaryFile(max_size=SPOOL_BYTES)
    run = functools.partial(contextvars.copy_context().run, functools.partial(check, reencoded=reencoded), stream)
    try:
        checked = await loop.run_in_executor(_POOL, run)
    except ValidationFailed as refused:
        reencoded.close()
        return refused
    except BaseException:
        reencoded.close()
        raise
    if checked.file is not reencoded:
        reencoded.close()
    return checked


@asynccontextmanager
async def storing() -> AsyncIterator[None]:
    """Hold one of the ``CONCURRENT_STORES`` places for a file's bytes in memory."""
    loop = asyncio.get_running_loop()
    gate = _GATES.get(loop)
    if gate is None:
        gate = _GATES[loop] = asyncio.Semaphore(CONCURRENT_STORES)
    async with gate:
        yield


async def read_checked(checked: CheckedFile) -> bytes:
    """The checked file's bytes, read in a thread (the file may be on disk)."""
    return await asyncio.to_thread(checked.read)
