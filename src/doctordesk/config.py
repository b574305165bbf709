"""Configuration: one validated settings class, read from ``DOCTORDESK_*`` environment variables."""

from __future__ import annotations

import base64
import binascii
import ipaddress
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from doctordesk.domain import reminders
from doctordesk.domain.clock import Clock, ShiftedClock, SystemClock, parse_test_clock
from doctordesk.domain.mail.addresses import check_address
from doctordesk.domain.mail.relay import parse_relay
from doctordesk.domain.scheduling.suggestions import DEFAULT_HORIZON, MAX_HORIZON

PREFIX = "DOCTORDESK_"
log = logging.getLogger(__name__)


class SettingsError(ValueError):
    """Settings the service cannot start with; the message names every offending variable and what is wrong."""


# Settings whose values are never repeated in an error message (they may hold passwords or tokens).
SECRET_SETTINGS = frozenset(
    {"database_url", "redis_url", "push_credentials", "metrics_token", "secrets_key", "smtp_url"}
)
PushAdapterName = Literal["gorush", "fcm", "none"]


def _no_spaces(value: str) -> str:
    if any(c.isspace() for c in value):
        raise ValueError("must not contain spaces")
    return value


def _trusted_proxies(value: str) -> str:
    for entry in (e.strip() for e in value.split(",")):
        if not entry or entry == "*" or entry.startswith(("/", "unix:")):
            continue
        try:
            ipaddress.ip_network(entry, strict=False)
        except ValueError:
            raise ValueError(
                f"{entry!r} is not an IP address or network (comma-separated; '*' for any, empty for none)"
            ) from None
    return value


def _sso_ca_file(value: Path | None) -> Path | None:
    if value is not None and not value.is_file():
        raise ValueError("not a readable file of PEM certificates")
    return value


def _secrets_key(value: str) -> str:
    if not value.strip():
        return ""
    for key in (k.strip() for k in value.split(",")):
        try:
            ok = len(base64.urlsafe_b64decode(key.encode("ascii"))) == 32 and len(key) == 44
        except (ValueError, binascii.Error):
            ok = False
        if not ok:
            raise ValueError(
                "each comma-separated key must be 32 bytes in URL-safe base64 (`doctordesk new-secrets-key` "
                "prints one); empty for the key file in the data directory"
            )
    return value


def _database(value: str) -> str:
    if value and not value.startswith(("sqlite+aiosqlite://", "postgresql+asyncpg://")):
        raise ValueError("use sqlite+aiosqlite:///<file> or postgresql+asyncpg://<user>@<host>/<database>")
    return value


def _bus_socket(value: str) -> str:
    if value and (len(value.encode()) > 100 or not value.startswith("/")):
        raise ValueError("an absolute path of at most 100 bytes (a Unix socket), or empty")
    return value


def _redis(value: str) -> str:
    if value and not value.startswith(("redis://", "rediss://", "unix://")):
        raise ValueError("use redis://<host>:<port>/<db>, rediss://... or unix://...; empty for no Redis")
    return value


def _test_clock(value: str) -> str:
    problem = parse_test_clock(value) if value else None
    if isinstance(problem, str):
        raise ValueError(problem)
    return value


def _reminder_hours(value: str) -> str:
    try:
        return reminders.format_hours(reminders.parse_hours(value))
    except ValueError as exc:
        raise ValueError(f"reminder hours: {exc}") from None


def _public_url(value: str) -> str:
    value = value.strip().rstrip("/")
    parts = urlsplit(value)
    if value and (parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment):
        raise ValueError("an http:// or https:// address without query or fragment, e.g. https://clinic.example")
    return value


def _smtp(value: str) -> str:
    if value:
        parse_relay(value)  # its ValueError names the problem
    return value


def _mail_from(value: str) -> str:
    if value:
        check_address(value)
    return value


def _push(value: str) -> str:
    if value and not value.startswith(("http://", "https://")):
        raise ValueError("use an http:// or https:// address; empty for no push")
    return value


# Each setting's own check beyond its type and range (``Settings._checked`` runs them): the value as kept, or
# ValueError saying what is wrong.
_VALUE_CHECKS: dict[str, Callable[[Any], Any]] = {
    "metrics_token": _no_spaces,
    "redis_channel": _no_spaces,
    "forwarded_allow_ips": _trusted_proxies,
    "sso_ca_file": _sso_ca_file,
    "secrets_key": _secrets_key,
    "database_url": _database,
    "bus_socket": _bus_socket,
    "redis_url": _redis,
    "test_clock": _test_clock,
    "reminder_hours": _reminder_hours,
    "public_url": _public_url,
    "smtp_url": _smtp,
    "mail_from": _mail_from,
    "push_url": _push,
}


class Settings(BaseSettings):
    """Everything the service can be told. With nothing set it runs embedded: SQLite under ./var, in-process bus.

    Every setting is checked at start (type and range; ``load_settings`` names the variable when one is wrong)."""

    model_config = SettingsConfigDict(env_prefix=PREFIX, env_file=None, extra="ignore")

    host: str = Field("127.0.0.1", min_length=1)
    port: int = Field(8000, ge=1, le=65535)
    # `serve` believes X-Forwarded-For (the client's address) and X-Forwarded-Proto only on connections from these
    # addresses or networks, comma-separated ("*": any; empty: none). Login throttling counts per client address.
    forwarded_allow_ips: str = "127.0.0.1,::1"
    # One log line per request: clinics behind a proxy that logs requests may turn it off (it costs the poll).
    access_log: bool = True
    data_dir: Path = Path("var")
    database_url: str = ""  # empty: sqlite+aiosqlite:///<data_dir>/doctordesk.db
    redis_url: str = ""  # empty: in-process event bus
    # The Unix socket of the event bus the processes of one `serve --workers N` share (serve sets it for its
    # workers when there is no Redis; docs/operations.md). Empty: the in-process bus (or Redis).
    bus_socket: str = ""
    # How long a write waits for a lock another transaction holds (SQLite busy timeout, PostgreSQL lock_timeout)
    # before the request is answered 503 SERVICE_BUSY with nothing written.
    db_lock_timeout_ms: int = Field(10_000, ge=1, le=600_000)
    # Database connections one process holds at most (SQLite: its readers' pool; PostgreSQL: the pool), each opened
    # when first needed and kept. 0: derived from the cores (store/db.default_pool_size).
    db_pool_size: int = Field(0, ge=0, le=500)
    # How long a request waits for a connection when all are in use before it is answered 503 SERVICE_BUSY with
    # Retry-After (nothing written) rather than queueing behind a burst (docs/operations.md#database-pools).
    db_pool_wait_ms: int = Field(1000, ge=1, le=30_000)
    # At most this many polls of one process render at once; the others wait their turn before reading (a page or
    # an action's answer never waits). 0: half the database pool, at least 2 (docs/operations.md#poll-renders).
    poll_renders: int = Field(0, ge=0, le=500)
    # SQLite: a screen's reads (the appointment list's render) run on the event loop's thread, as the writer's
    # statements do, instead of a hand-off to a thread per call (docs/operations.md#database-pools). Off: threads.
    db_sqlite_inline_screen_reads: bool = True
    # The keys that encrypt the secrets stored in the database (TOTP seeds, the SSO client secret, the SMART signing
    # key, webhook signing secrets), comma-separated: the first encrypts, every one decrypts (rotation). Empty: the
    # key file <data_dir>/secrets.key, made on first start (docs/operations.md#secrets-at-rest).
    secrets_key: str = ""
    # "test" only in this project's own test suite: it allows DOCTORDESK_TEST_CLOCK, the moment the processes a test
    # starts run at (docs/development.md#the-moment-a-test-runs-at). A clinic leaves it "production".
    environment: Literal["production", "development", "test"] = "production"
    test_clock: str = ""

    # Accounts
    # A PEM file of the certificate authorities the single sign-on provider's HTTPS certificate is checked against
    # (a clinic's own CA); unset: the system's (docs/accounts.md#single-sign-on).
    sso_ca_file: Path | None = None
    # The provider's issuer (and what its discovery names) on loopback, private or link-local addresses is refused
    # unless this is on: a clinic whose provider runs on its own network turns it on.
    sso_allow_private_addresses: bool = False
    # Development only (refused in production): an issuer over plain http:// is accepted when its host is this
    # machine (127.0.0.1, ::1, localhost), a provider run beside a developer's server. Everywhere else https://.
    sso_allow_http_loopback: bool = False
    # SMART Backend Services (docs/smart.md#backend-services): a service's JWKS URL on loopback, private or
    # link-local addresses is refused unless this is on (a clinic whose record system runs on its own network), and
    # how long a fetched key set is used before it is fetched again.
    smart_jwks_allow_private_addresses: bool = False
    smart_jwks_cache_seconds: float = Field(300.0, ge=0, le=86400)
    token_ttl_seconds: int = Field(12 * 3600, ge=60, le=90 * 86400)
    auth_cache_seconds: float = Field(300.0, ge=0, le=3600)
    # How recent a sign-in or re-authentication must be for a change of how the account signs in (step-up).
    reauth_seconds: int = Field(600, ge=30, le=86400)
    # Holds of a time through FHIR's $hold (docs/booking.md#holds): how many unexpired holds one patient may have
    # with one doctor in one week, and how long a holder waits before holding a time again whose hold lapsed.
    hold_patient_week_cap: int = Field(2, ge=1, le=20)
    hold_cooldown_minutes: int = Field(30, ge=0, le=1440)
    # Clinic reference data (doctors, locations, work hours, fees) is re-read at most this often by Review and
    # Approve; 0 reads it on every request.
    reference_cache_seconds: float = Field(5.0, ge=0, le=86400)
    # How far ahead appointment requests and offers may be, in days (docs/booking.md#horizon): every way a time is
    # asked for or proposed is held to it, and free times and the booking screen's weeks end there.
    booking_horizon_days: int = Field(
        DEFAULT_HORIZON.days, ge=1, le=MAX_HORIZON.days, description="How far ahead requests and offers may be"
    )
    # The clinic's rule for late cancellation (docs/booking.md#cancelling): a patient cancels their own appointment
    # in the app up to this many hours before it starts; later they are told to contact the clinic. 0: up to the
    # start.
    patient_cancel_hours: int = Field(
        24, ge=0, le=8760, description="Until how many hours before its start a patient may cancel in the app"
    )
    # Reminders before approved appointments (docs/notifications.md#reminders): the hours before the start at which
    # they go, comma-separated (the clinic's default; admins change it on the Clinic screen), how often the sender
    # looks for due ones, and the address patients open the reminder's links at (empty: http://HOST:PORT).
    reminder_hours: str = "24,2"
    reminder_poll_seconds: float = Field(60.0, ge=0.05, le=3600)
    reminder_in_process: bool = True
    public_url: str = ""
    # The waitlist (docs/waitlist.md): a freed time goes to the first waiting patient for the offer minutes, then
    # the next (one-at-a-time), or to every matching patient at once, the first to accept winning (all-at-once);
    # whether accepting moves an approved appointment with the same doctor and service at once (direct move) or
    # becomes a request for the doctor; how often the waitlist looks for freed times and lapsed offers besides
    # the changes that wake it. Read through ``services/waitlist/policy.policy``.
    waitlist_mode: Literal["one-at-a-time", "all-at-once"] = "one-at-a-time"
    waitlist_offer_minutes: int = Field(30, ge=1, le=1440)
    waitlist_direct_move: bool = False
    waitlist_check_seconds: float = Field(60.0, gt=0, le=3600)
    # Off: no rounds in this process; `doctordesk worker` (or another server instance) must run them.
    waitlist_in_process: bool = True
    # Failed logins (docs/accounts.md#throttling): per username and client address, this many lock the address
    # out of the username for the lockout; per username from every address, the ceiling slows it to one
    # attempt per interval (the count drains by one per interval).
    login_max_failures: int = Field(5, ge=1, le=1000)
    login_lockout_seconds: int = Field(300, ge=1, le=30 * 86400)
    login_username_max_failures: int = Field(20, ge=1, le=100_000)
    login_username_interval_seconds: int = Field(60, ge=1, le=86400)
    # Stale throttle rows are first pruned this long after a process starts (then hourly): a process that lives
    # less than that (a one-off command, a test) leaves them to the next one.
    login_prune_delay_seconds: float = Field(60.0, ge=0, le=86400)
    argon2_time_cost: int = Field(3, ge=1, le=100)
    argon2_memory_kib: int = Field(65536, ge=8, le=4 * 1024 * 1024)

    # Screens: poll intervals (the page's timeout, seconds)
    poll_list_seconds: int = Field(30, ge=1, le=3600)
    poll_review_seconds: int = Field(20, ge=1, le=3600)
    poll_chat_seconds: int = Field(5, ge=1, le=3600)
    poll_default_seconds: int = Field(30, ge=1, le=3600)
    # A page is trusted until an event on its topics or the moment time alone changes it (docs/realtime.md); this
    # is only the safety net: at most this long before the screen is rendered again anyway.
    screen_max_age_seconds: int = Field(900, ge=1, le=86400)

    # Limits
    max_body_bytes: int = Field(11 * 1024 * 1024, ge=1024, le=1024**3)
    max_upload_bytes: int = Field(10 * 1024 * 1024, ge=1, le=1024**3)
    max_message_chars: int = Field(4000, ge=1, le=1_000_000)
    chat_page_size: int = Field(30, ge=1, le=500)
    # Rows per page of each section of the appointment list and the thread list ("show more" adds as many).
    list_page_size: int = Field(25, ge=1, le=500)
    chat_send_per_minute: int = Field(30, ge=0, le=1_000_000)  # 0: no limit

    # Real-time
    heartbeat_seconds: float = Field(20.0, gt=0, le=3600)
    sse_retry_ms: int = Field(3000, ge=100, le=3_600_000)
    stream_ticket_seconds: int = Field(60, ge=1, le=3600)
    # Every open stream's token is re-checked this often (revoked, expired, user inactive: the stream closes);
    # the bound on a stream outliving its token when the bus could not carry the logout.
    stream_check_seconds: float = Field(10.0, gt=0, le=3600)
    # Events staged by processes without the bus (the bulk import) are looked for and published this often (0: not
    # by this process; another instance relays them).
    relay_seconds: float = Field(2.0, ge=0, le=3600)

    # Push partner
    push_adapter: PushAdapterName = "gorush"
    push_url: str = ""
    push_credentials: str = ""
    push_in_process: bool = True
    push_poll_seconds: float = Field(1.0, gt=0, le=3600)  # how often an idle dispatcher looks for due notifications
    push_lease_seconds: float = Field(60.0, gt=0, le=86400)  # a claimed notification comes due again after this
    push_backoff_seconds: float = Field(2.0, gt=0, le=86400)  # first retry delay; doubles per attempt
    push_backoff_max_seconds: float = Field(300.0, gt=0, le=7 * 86400)
    push_max_attempts: int = Field(30, ge=1, le=1000)
    # Webhooks (docs/webhooks.md): deliveries go out from the server process unless this is off (then run
    # `doctordesk worker`).
    webhook_in_process: bool = True
    webhook_poll_seconds: Annotated[float, Field(ge=0.05, le=60)] = 1.0
    webhook_lease_seconds: Annotated[float, Field(ge=5, le=3600)] = 60.0
    webhook_timeout_seconds: Annotated[float, Field(ge=0.5, le=60)] = 10.0
    webhook_backoff_seconds: Annotated[float, Field(ge=0.01, le=3600)] = 5.0  # first retry delay; doubles
    webhook_backoff_max_seconds: Annotated[float, Field(ge=0.01, le=86400)] = 3600.0
    webhook_max_attempts: Annotated[int, Field(ge=1, le=1000)] = 150  # then the delivery is failed (replayable)
    webhook_concurrency: Annotated[int, Field(ge=1, le=256)] = 64  # requests in flight per dispatcher
    # Requests in flight to one endpoint: a window starting at 1 that grows with each success up to this.
    webhook_endpoint_concurrency: Annotated[int, Field(ge=1, le=256)] = 16
    webhook_batch_size: Annotated[int, Field(ge=1, le=1000)] = 100  # deliveries one claim leases at most
    # An endpoint whose every attempt has failed for this long is disabled and the admins are told (5 days).
    webhook_disable_after_seconds: Annotated[int, Field(ge=60, le=90 * 86400)] = 5 * 86400
    # After a secret rotation the previous secret keeps signing (a second signature) this long.
    webhook_secret_overlap_seconds: Annotated[int, Field(ge=0, le=30 * 86400)] = 86400
    # Endpoint URLs on loopback, private or link-local addresses (and "localhost") are refused unless this is on.
    webhook_allow_private_addresses: bool = False
    # Email to patients (docs/notifications.md): the SMTP relay (smtp://, smtp+starttls:// or smtps://, a user and
    # password in the URL) and the sender. No relay: no email (said once at start).
    smtp_url: str = ""
    mail_from: str = ""
    mail_in_process: bool = True  # off: `doctordesk worker` sends the mail
    mail_poll_seconds: Annotated[float, Field(ge=0.05, le=600)] = 5.0
    mail_lease_seconds: Annotated[float, Field(ge=10, le=3600)] = 300.0
    mail_timeout_seconds: Annotated[float, Field(ge=1, le=300)] = 30.0
    mail_backoff_seconds: Annotated[float, Field(ge=0.01, le=3600)] = 60.0  # first retry delay; doubles
    mail_backoff_max_seconds: Annotated[float, Field(ge=0.01, le=86400)] = 3600.0
    mail_max_attempts: Annotated[int, Field(ge=1, le=100)] = 12  # then the mail is failed (shown to admins)
    mail_batch_size: Annotated[int, Field(ge=1, le=500)] = 20  # mails one claim leases at most
    # FHIR bulk export (docs/fhir.md#bulk-export): jobs run in the server process unless this is off (then run
    # `doctordesk worker`); files under <data_dir>/exports.
    bulk_in_process: bool = True
    bulk_poll_seconds: Annotated[float, Field(ge=0.05, le=600)] = 2.0
    bulk_lease_seconds: Annotated[float, Field(ge=5, le=3600)] = 60.0  # renewed after every page written
    bulk_page_size: Annotated[int, Field(ge=10, le=10000)] = 1000  # rows one keyset read takes
    bulk_retention_seconds: Annotated[int, Field(ge=60, le=30 * 86400)] = 86400  # a finished job's files kept
    bulk_max_jobs_per_requester: Annotated[int, Field(ge=1, le=100)] = 2  # running at once; more is 429
    bulk_max_attempts: Annotated[int, Field(ge=1, le=100)] = 5  # claims of one job before it is an error
    # How long a change may take from its time stamp to its commit: an export's transaction time is this much before
    # its kick-off, so a write still open at the kick-off is in the next `_since` export (docs/fhir.md#bulk-export).
    bulk_settle_seconds: Annotated[int, Field(ge=0, le=3600)] = 60
    metrics_token: str = ""  # when set, GET /metrics needs it as a bearer token; empty: loopback clients only
    # Prefix of the Redis channel and keys (several deployments on one Redis).
    redis_channel: str = Field("doctordesk", min_length=1, max_length=64)

    @field_validator(*_VALUE_CHECKS)
    @classmethod
    def _checked(cls, value: Any, info: ValidationInfo) -> Any:
        return _VALUE_CHECKS[str(info.field_name)](value)

    @model_validator(mode="after")
    def _check(self) -> Settings:
        if self.test_clock and self.environment != "test":
            raise ValueError(f"{PREFIX}TEST_CLOCK is read only when {PREFIX}ENVIRONMENT=test (never in a clinic)")
        if self.sso_allow_http_loopback and self.environment == "production":
            raise ValueError(
                f"{PREFIX}SSO_ALLOW_HTTP_LOOPBACK is for development only: set {PREFIX}ENVIRONMENT=development"
            )
        if self.max_upload_bytes >= self.max_body_bytes:
            raise ValueError(
                f"{PREFIX}MAX_UPLOAD_BYTES ({self.max_upload_bytes}) must be smaller than {PREFIX}MAX_BODY_BYTES "
                f"({self.max_body_bytes}): an attachment travels inside a request body"
            )
        if self.push_backoff_max_seconds < self.push_backoff_seconds:
            raise ValueError(
                f"{PREFIX}PUSH_BACKOFF_MAX_SECONDS ({self.push_backoff_max_seconds:g}) must not be smaller than "
                f"{PREFIX}PUSH_BACKOFF_SECONDS ({self.push_backoff_seconds:g})"
            )
        if self.smtp_url and not self.mail_from:
            raise ValueError(f"{PREFIX}SMTP_URL needs {PREFIX}MAIL_FROM, the address patients' mail comes from")
        if self.mail_lease_seconds < 3 * self.mail_timeout_seconds:
            raise ValueError("DOCTORDESK_MAIL_LEASE_SECONDS must be at least 3 × DOCTORDESK_MAIL_TIMEOUT_SECONDS")
        if not self.database_url:
            self.database_url = f"sqlite+aiosqlite:///{self.data_dir / 'doctordesk.db'}"
        if self.webhook_lease_seconds < 3 * self.webhook_timeout_seconds:
            # No send starts after half a claim's lease; the last one may take the whole timeout.
            raise ValueError("DOCTORDESK_WEBHOOK_LEASE_SECONDS must be at least 3 × DOCTORDESK_WEBHOOK_TIMEOUT_SECONDS")
        return self

    def clock(self) -> Clock:
        """The service's clock: the system's, or in the test suite the moment ``DOCTORDESK_TEST_CLOCK`` names."""
        shifted = parse_test_clock(self.test_clock) if self.test_clock and self.environment == "test" else None
        return shifted if isinstance(shifted, ShiftedClock) else SystemClock()

    @property
    def link_base(self) -> str:
        """Where patients open the links of their mail: ``DOCTORDESK_PUBLIC_URL``, else this server's address."""
        return self.public_url or f"http://{self.host}:{self.port}"

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")


def describe(error: ValidationError) -> str:
    """One line per problem, naming the variable (values of secret settings are not repeated)."""
    lines = []
    for problem in error.errors():
        field = str(problem["loc"][0]) if problem["loc"] else ""
        message = str(problem["msg"]).removeprefix("Value error, ")
        if not field:
            lines.append(message)
            continue
        variable = f"{PREFIX}{field.upper()}"
        if field in SECRET_SETTINGS:
            lines.append(f"{variable}: {message}")
        else:
            lines.append(f"{variable}={problem.get('input')!r}: {message}")
    return "invalid settings (docs/operations.md#settings):\n  " + "\n  ".join(lines)


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


def load_settings(*, warn: bool = True) -> Settings:
    """The settings from the environment, with a warning for every variable that has no effect (``warn``);
    SettingsError naming each variable whose value is out of range or malformed."""
    if warn:
        for name in unknown_variables(os.environ):
            log.warning("%s is not a setting of doctordesk and is ignored (docs/operations.md#settings)", name)
    try:
        return Settings()
    except ValidationError as exc:
        raise SettingsError(describe(exc)) from None
