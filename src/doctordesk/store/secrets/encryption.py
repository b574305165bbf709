"""Encryption at rest of the secrets the service reads back to use them: TOTP seeds, the single sign-on client
secret, the SMART signing key and webhook signing secrets (docs/operations.md#secrets-at-rest).

Values are sealed with Fernet (AES-128-CBC and HMAC-SHA256, from ``cryptography``) under a key the database does
not hold: ``DOCTORDESK_SECRETS_KEY`` (one or more keys, comma-separated), or when it is unset the key file
``<data_dir>/secrets.key`` made on first start. The first key seals; every listed key opens (``MultiFernet``), so a
key is rotated by listing a new one first, running ``doctordesk reencrypt-secrets``, then dropping the old one.

A column typed ``EncryptedText`` seals on write and opens on read. Its keys come from the engine the statement runs
on (``attach``: each ``Database`` brings its own), so nothing global holds them. A stored value starts with
``fernet:``; one without it was written before encryption and is read as it is, until the next write or
``doctordesk reencrypt-secrets`` seals it.
"""

from __future__ import annotations

import binascii
import logging
import os
import secrets
from collections.abc import Sequence
from pathlib import Path
from weakref import WeakKeyDictionary

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from sqlalchemy import Text
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.types import TypeDecorator

from doctordesk.config import Settings
from doctordesk.store.private_files import private_dir

log = logging.getLogger(__name__)

PREFIX = "fernet:"
KEY_FILE = "secrets.key"
KEY_VARIABLE = "DOCTORDESK_SECRETS_KEY"


class SecretKeyError(RuntimeError):
    """The secrets key is missing or malformed, or a stored secret was sealed with a key that is not listed: the
    operator's to fix (the message says how); never the request's fault."""


def new_key() -> str:
    """A new random key (32 bytes, URL-safe base64) for ``DOCTORDESK_SECRETS_KEY`` or the key file."""
    return Fernet.generate_key().decode("ascii")


def is_sealed(stored: str) -> bool:
    return stored.startswith(PREFIX)


class SecretBox:
    """Seals with the first of ``keys`` and opens with any of them. ``source`` names where the keys came from
    (the variable or the key file) in error messages."""

    def __init__(self, keys: Sequence[str], *, source: str) -> None:
        self.source = source
        if not keys:
            raise SecretKeyError(f"{source} holds no key (make one with `doctordesk new-secrets-key`)")
        try:
            self._keys = [Fernet(key) for key in keys]
        except (ValueError, binascii.Error):
            raise SecretKeyError(
                f"{source}: every key must be 32 bytes in URL-safe base64, as `doctordesk new-secrets-key` prints"
            ) from None
        self._any = MultiFernet(self._keys)

    def seal(self, plain: str) -> str:
        return PREFIX + self._any.encrypt(plain.encode()).decode("ascii")

    def open(self, stored: str) -> str:
        """The secret in ``stored``: unsealed, or as it is when it was stored before encryption."""
        if not is_sealed(stored):
            return stored
        try:
            return self._any.decrypt(stored.removeprefix(PREFIX).encode("ascii")).decode()
        except (InvalidToken, UnicodeError):
            raise SecretKeyError(
                f"a stored secret was encrypted with a key that {self.source} does not list (a retired key dropped "
                "too early, or another installation's key); `doctordesk reencrypt-secrets` names the rows"
            ) from None

    def is_current(self, stored: str) -> bool:
        """Whether ``stored`` is sealed with the first key (what a write would produce)."""
        if not is_sealed(stored):
            return False
        try:
            self._keys[0].decrypt(stored.removeprefix(PREFIX).encode("ascii"))
        except InvalidToken:
            return False
        return True


def box_from_settings(settings: Settings) -> SecretBox:
    """The keys of ``DOCTORDESK_SECRETS_KEY``, or else of the data directory's key file (made when missing)."""
    if settings.secrets_key:
        return SecretBox(split_keys(settings.secrets_key), source=KEY_VARIABLE)
    path = settings.data_dir / KEY_FILE
    return SecretBox(read_key_file(path), source=str(path))


def split_keys(value: str) -> list[str]:
    return [key.strip() for key in value.split(",") if key.strip()]


def read_key_file(path: Path) -> list[str]:
    """The keys of the key file, one a line (``#`` starts a comment); a new file with one new key when there is
    none. Two processes starting at once end with the same key: the file appears whole or not at all."""
    if not path.exists():
        _create_key_file(path)
    if path.stat().st_mode & 0o077:
        log.warning("%s can be read by other users of this host: chmod 600 it", path)
    lines = (line.strip() for line in path.read_text(encoding="ascii").splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def _create_key_file(path: Path) -> None:
    private_dir(path.parent)
    draft = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="ascii") as file:
            file.write(
                f"# doctordesk secrets key (docs/operations.md#secrets-at-rest): back it up apart from the "
                f"database\n{new_key()}\n"
            )
            file.flush()
            os.fsync(file.fileno())
        try:
            os.link(draft, path)  # fails when another process made the file first: its key stays
        except FileExistsError:
            pass
        else:
            log.warning("made a new secrets key in %s: back it up apart from the database", path)
    finally:
        draft.unlink()


# The keys of each engine's dialect: a statement's processors are given only the dialect.
_BOXES: WeakKeyDictionary[Dialect, SecretBox] = WeakKeyDictionary()


def attach(engine: AsyncEngine, box: SecretBox) -> None:
    """Statements on ``engine`` seal and open ``EncryptedText`` columns with ``box``."""
    _BOXES[engine.sync_engine.dialect] = box


def box_of(dialect: Dialect) -> SecretBox:
    box = _BOXES.get(dialect)
    if box is None:
        raise SecretKeyError(
            "this database handle was opened without the secrets key: open it with Database.from_settings"
        )
    return box


class EncryptedText(TypeDecorator[str]):
    """Text sealed on write and opened on read (see the module). Never compare it in SQL: each sealing of one
    value differs (a random IV), so equality on it finds nothing."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        return None if value is None else box_of(dialect).seal(value)

    def process_result_value(self, value: str | None, dialect: Dialect) -> str | None:
        if value is None or not is_sealed(value):
            return value
        return box_of(dialect).open(value)
