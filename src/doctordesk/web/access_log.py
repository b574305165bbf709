"""What `serve`'s access log writes of a request (docs/operations.md#access-log): the line uvicorn writes, with the
secrets some addresses carry replaced by ``***`` — a reminder link's token (``/reminder/{token}``), a calendar feed's
(``/calendar/{token}.ics``), a stream ticket (``?ticket=``) and what a single sign-on provider sends back
(``?code=``, ``?state=``). Each works once or can be revoked, but a log is kept longer and read by more people than
the service's own tables, which store only their hashes."""

from __future__ import annotations

import copy
import logging
import re
from typing import Any

REDACTED = "***"
ACCESS_LOGGER = "uvicorn.access"

_SECRET_PATHS = (
    re.compile(r"^(/reminder/)[^/?#]+"),
    re.compile(r"^(/calendar/)[^/?#]+?(?=\.ics(?:$|[?#]))"),
)
_SECRET_PARAMETERS = ("ticket", "code", "state", "access_token")
_SECRET_QUERY = re.compile(rf"(^|&)((?:{'|'.join(_SECRET_PARAMETERS)})=)[^&#]*", re.IGNORECASE)


def redacted(target: str) -> str:
    """``target`` (a path with its query, as the access log writes it) with its secrets replaced by ``***``."""
    path, mark, query = target.partition("?")
    for pattern in _SECRET_PATHS:
        path = pattern.sub(rf"\g<1>{REDACTED}", path)
    if mark:
        query = _SECRET_QUERY.sub(rf"\g<1>\g<2>{REDACTED}", query)
    return path + mark + query


class SecretsOut(logging.Filter):
    """Redacts the target of uvicorn's access records: ``(client, method, target, http version, status)``."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) == 5 and isinstance(args[2], str):
            record.args = (args[0], args[1], redacted(args[2]), args[3], args[4])
        return True


def log_config(base: dict[str, Any]) -> dict[str, Any]:
    """uvicorn's logging configuration ``base`` with ``SecretsOut`` on its access logger."""
    config = copy.deepcopy(base)
    config.setdefault("filters", {})["secrets_out"] = {"()": f"{__name__}.SecretsOut"}
    config["loggers"].setdefault(ACCESS_LOGGER, {})["filters"] = ["secrets_out"]
    return config
