"""Running the file checks (``domain/file_check.py``) off the event loop, a bounded number at a time.

Parsing a PDF or decoding an image is CPU work that can take a second and, for a large photo, a hundred megabytes
while the pixels are decoded. The checks run in their own small pool of threads, so the event loop keeps serving
other requests and eight uploads arriving together are checked two at a time (the others wait their turn in the
pool's queue) instead of decoding eight photos at once.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from concurrent.futures import ThreadPoolExecutor
from typing import IO

from doctordesk.domain.errors import ValidationFailed
from doctordesk.domain.file_check import CheckedFile, check

CONCURRENT_CHECKS = 2
_POOL = ThreadPoolExecutor(max_workers=CONCURRENT_CHECKS, thread_name_prefix="file-check")


async def check_upload(stream: IO[bytes]) -> CheckedFile | ValidationFailed:
    """The checked file, or the refusal (returned, not raised, so the caller decides when it counts: after the
    access and chat rules, as for any other invalid field)."""
    loop = asyncio.get_running_loop()
    run = functools.partial(contextvars.copy_context().run, check, stream)
    try:
        return await loop.run_in_executor(_POOL, run)
    except ValidationFailed as refused:
        return refused
