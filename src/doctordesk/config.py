"""Configuration: one validated settings class, read from ``DOCTORDESK_*`` environment variables."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

from pydantic import Field, PositiveInt, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PREFIX = "DOCTORDESK_"
log = logging.getLogger(__name__)


class Settings(BaseSettings):
    """Everything the service can be told. With nothing set it runs embedded: SQLite under ./var, in-process bus."""

    model_config = SettingsConfigDict(env_prefix=PREFIX, env_file=None, extra="ignore")

    host: str = "127.0.0.1"
    port: int = 8000
    # `serve` believes X-Forwarded-For (the client's address) and X-Forwarded-Proto only on connections from these
    # addresses or networks, comma-separated ("*": any; empty: none). Login throttling counts per client address.
    forwarded_allow_ips: str = "127.0.0.1,::1"
    data_dir: Path = Path("var")
    database_url: str = ""  # empty: sqlite+aiosqlite:///<data_dir>/doctordesk.db
    redis_url: str = ""  # empty: in-process event bus
    # How long a write waits for a lock another transaction holds (SQLite busy timeout, PostgreSQL lock_timeout)
    # before the request is answered 503 SERVICE_BUSY with nothing written.
    db_lock_timeout_ms: int = 10_000

    # Accounts
    token_ttl_seconds: int = 12 * 3600
    auth_cache_seconds: float = 5.0
    # Clinic reference data (doctors, locations, work hours, fees) is re-read at most this often by Review and
    # Approve; 0 reads it on every request.
    reference_cache_seconds: float = 5.0
    # Failed logins (docs/accounts.md#throttling): per username and client address, this many lock the address
    # out of the username for the lockout; per username from every address, the ceiling slows it to one
    # attempt per interval (the count drains by one per interval).
    login_max_failures: PositiveInt = 5
    login_lockout_seconds: PositiveInt = 300
    login_username_max_failures: PositiveInt = 20
    login_username_interval_seconds: PositiveInt = 60
    argon2_time_cost: int = 3
    argon2_memory_kib: int = 65536

    # Screens: poll intervals (the page's timeout, seconds)
    poll_list_seconds: int = 30
    poll_review_seconds: int = 20
    poll_chat_seconds: int = 5
    poll_default_seconds: int = 30
    # A cached "unchanged" answer is trusted at most this long before the screen is re-rendered.
    screen_max_age_seconds: int = 60

    # Limits
    max_body_bytes: int = 11 * 1024 * 1024
    max_upload_bytes: int = 10 * 1024 * 1024
    max_message_chars: int = 4000
    chat_page_size: int = 30
    # Rows per page of each section of the appointment list and the thread list ("show more" adds as many).
    list_page_size: PositiveInt = 25
    chat_send_per_minute: int = 30

    # Real-time
    heartbeat_seconds: float = 20.0
    sse_retry_ms: int = 3000
    stream_ticket_seconds: int = 60

    # Push partner
    push_adapter: str = "gorush"  # gorush | fcm | none
    push_url: str = ""
    push_credentials: str = ""
    push_in_process: bool = True
    push_poll_seconds: float = 1.0  # how often an idle dispatcher looks for due notifications
    push_lease_seconds: float = 60.0  # a claimed notification comes due again after this (dispatcher died)
    push_backoff_seconds: float = 2.0  # first retry delay; doubles per attempt
    push_backoff_max_seconds: float = 300.0
    push_max_attempts: int = 30

    # Webhooks (docs/webhooks.md): deliveries go out from the server process unless this is off (then run
    # `doctordesk worker`).
    webhook_in_process: bool = True
    webhook_poll_seconds: Annotated[float, Field(ge=0.05, le=60)] = 1.0
    webhook_lease_seconds: Annotated[float, Field(ge=5, le=3600)] = 60.0
    webhook_timeout_seconds: Annotated[float, Field(ge=0.5, le=60)] = 10.0
    webhook_backoff_seconds: Annotated[float, Field(ge=0.01, le=3600)] = 5.0  # first retry delay; doubles
    webhook_backoff_max_seconds: Annotated[float, Field(ge=0.01, le=86400)] = 3600.0
    webhook_max_attempts: Annotated[int, Field(ge=1, le=1000)] = 150  # then the delivery is failed (replayable)
    webhook_concurrency: Annotated[int, Field(ge=1, le=256)] = 32  # lanes (requests in flight) per dispatcher
    webhook_batch_size: Annotated[int, Field(ge=1, le=1000)] = 32  # deliveries a lane leases at a time
    # An endpoint whose every attempt has failed for this long is disabled and the admins are told (5 days).
    webhook_disable_after_seconds: Annotated[int, Field(ge=60, le=90 * 86400)] = 5 * 86400
    # After a secret rotation the previous secret keeps signing (a second signature) this long.
    webhook_secret_overlap_seconds: Annotated[int, Field(ge=0, le=30 * 86400)] = 86400
    # Endpoint URLs on loopback, private or link-local addresses (and "localhost") are refused unless this is on.
    webhook_allow_private_addresses: bool = False
    metrics_token: str = ""  # when set, GET /metrics needs it as a bearer token
    redis_channel: str = "doctordesk"  # prefix of the Redis channel and keys (several deployments on one Redis)

    @model_validator(mode="after")
    def _check(self) -> Settings:
        if not self.database_url:
            self.database_url = f"sqlite+aiosqlite:///{self.data_dir / 'doctordesk.db'}"
        if self.webhook_lease_seconds < 3 * self.webhook_timeout_seconds:
            # A lane starts no send after half the lease; the last one may take the whole timeout.
            raise ValueError("DOCTORDESK_WEBHOOK_LEASE_SECONDS must be at least 3 × DOCTORDESK_WEBHOOK_TIMEOUT_SECONDS")
        return self

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")


# Variables of this project's own test suite and benchmarks (tests/support, bench/): not settings, not typos.
TOOLING_VARIABLES = (f"{PREFIX}TEST_", f"{PREFIX}BENCH_", f"{PREFIX}REQUIRE_SERVICES")


def unknown_variables(environ: Mapping[str, str]) -> list[str]:
    """The ``DOCTORDESK_*`` variables that name no setting: a typo, or a setting this version no longer has (such
    as ``DOCTORDESK_SECRET_KEY``). They are ignored, so the operator is told."""
    known = {f"{PREFIX}{name}".upper() for name in Settings.model_fields}
    return sorted(
        name
        for name in environ
        if name.upper().startswith(PREFIX)
        and name.upper() not in known
        and not name.upper().startswith(TOOLING_VARIABLES)
    )


def load_settings() -> Settings:
    """The settings from the environment, with a warning for every variable that has no effect."""
    for name in unknown_variables(os.environ):
        log.warning("%s is not a setting of doctordesk and is ignored (docs/operations.md#settings)", name)
    return Settings()
