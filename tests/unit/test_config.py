"""Settings: a DOCTORDESK_* variable that names no setting is reported, never silently taken for one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from doctordesk.config import Settings, SettingsError, load_settings, unknown_variables
from doctordesk.domain.clock import SystemClock, clock_setting


def test_variables_naming_no_setting_are_reported_and_settings_are_not():
    environ = {
        "DOCTORDESK_SECRET_KEY": "x",  # retired: nothing used it
        "DOCTORDESK_ENVIRONMENT": "production",  # a setting again: it marks the test suite's processes
        "DOCTORDESK_PORT": "8001",
        "doctordesk_redis_url": "redis://localhost",  # names are case-insensitive, like the settings' own parsing
        "DOCTORDESK_REDIS_URLS": "redis://localhost",
        "PATH": "/usr/bin",
    }
    assert unknown_variables(environ) == ["DOCTORDESK_REDIS_URLS", "DOCTORDESK_SECRET_KEY"]


def test_the_test_suites_and_benchmarks_own_variables_are_not_reported():
    environ = {
        "DOCTORDESK_TEST_POSTGRES_URL": "postgresql+asyncpg://root@127.0.0.1:5432/test",
        "DOCTORDESK_TEST_REDIS_URL": "redis://127.0.0.1:6379/15",
        "DOCTORDESK_REQUIRE_SERVICES": "1",
        "DOCTORDESK_BENCH_REQUESTS": "300",
        "DOCTORDESK_TESTING": "1",  # not the suite's prefix: a typo or a retired name
    }
    assert unknown_variables(environ) == ["DOCTORDESK_TESTING"]


def test_every_setting_is_recognised_and_the_secret_key_is_gone():
    assert "secret_key" not in Settings.model_fields
    assert unknown_variables({f"DOCTORDESK_{name.upper()}": "1" for name in Settings.model_fields}) == []


# --- range checks: every setting is validated at start, and a wrong one is named --------------------------------

FREE_FORM = {
    "data_dir",
    "push_credentials",
    "push_adapter",
    "environment",
    "waitlist_mode",
}  # a path, a secret, choices


def test_every_numeric_setting_has_a_lower_and_an_upper_bound_and_every_text_setting_a_check():
    validated = {name for v in Settings.__pydantic_decorators__.field_validators.values() for name in v.info.fields}
    for name, field in Settings.model_fields.items():
        if name in FREE_FORM or field.annotation is bool:  # a bool is checked by its type alone
            continue
        kinds = {type(m).__name__ for m in field.metadata}
        if field.annotation in (int, float):
            assert kinds & {"Ge", "Gt"} and kinds & {"Le", "Lt"}, f"{name} has no range"
        else:
            assert name in validated or "MinLen" in kinds, f"{name} is not checked"


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("DOCTORDESK_CHAT_PAGE_SIZE", "0", "greater than or equal to 1"),
        ("DOCTORDESK_CHAT_PAGE_SIZE", "501", "less than or equal to 500"),
        ("DOCTORDESK_LIST_PAGE_SIZE", "-3", "greater than or equal to 1"),
        ("DOCTORDESK_PORT", "70000", "less than or equal to 65535"),
        ("DOCTORDESK_PATIENT_CANCEL_HOURS", "-1", "greater than or equal to 0"),
        ("DOCTORDESK_PATIENT_CANCEL_HOURS", "8761", "less than or equal to 8760"),
        ("DOCTORDESK_HEARTBEAT_SECONDS", "0", "greater than 0"),
        ("DOCTORDESK_STREAM_CHECK_SECONDS", "0", "greater than 0"),
        ("DOCTORDESK_SSE_RETRY_MS", "10", "greater than or equal to 100"),
        ("DOCTORDESK_TOKEN_TTL_SECONDS", "ten", "valid integer"),
        ("DOCTORDESK_AUTH_CACHE_SECONDS", "-1", "greater than or equal to 0"),
        ("DOCTORDESK_PUSH_MAX_ATTEMPTS", "0", "greater than or equal to 1"),
        ("DOCTORDESK_PUSH_ADAPTER", "apns", "'gorush', 'fcm' or 'none'"),
        ("DOCTORDESK_PUSH_URL", "gorush:8088", "http://"),
        ("DOCTORDESK_REDIS_URL", "localhost:6379", "redis://"),
        ("DOCTORDESK_DATABASE_URL", "postgresql://db/prod", "postgresql+asyncpg://"),
        ("DOCTORDESK_FORWARDED_ALLOW_IPS", "127.0.0.1,proxy.local", "not an IP address or network"),
        ("DOCTORDESK_REDIS_CHANNEL", "", "at least 1 character"),
        ("DOCTORDESK_METRICS_TOKEN", "two words", "must not contain spaces"),
        ("DOCTORDESK_ARGON2_MEMORY_KIB", "4", "greater than or equal to 8"),
        ("DOCTORDESK_SECRETS_KEY", "not-a-key", "32 bytes in URL-safe base64"),
        # A second key for rotation that is cut short.
        ("DOCTORDESK_SECRETS_KEY", "Wm0eGvDWmVqeQxzfZ4gkq46UAqNUyz6cmYB0rEcDE9Y=,Wm0eGvDWmVqe", "32 bytes"),
    ],
)
def test_an_invalid_setting_stops_the_start_with_a_message_naming_the_variable(monkeypatch, variable, value, says):
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError) as raised:
        load_settings()
    message = str(raised.value)
    assert variable in message and says in message


def test_values_of_secret_settings_are_not_repeated_in_the_message(monkeypatch):
    monkeypatch.setenv("DOCTORDESK_DATABASE_URL", "mysql://admin:hunter2@db/prod")
    monkeypatch.setenv("DOCTORDESK_METRICS_TOKEN", "hunter3 x")
    monkeypatch.setenv("DOCTORDESK_SECRETS_KEY", "hunter4")
    with pytest.raises(SettingsError) as raised:
        load_settings()
    message = str(raised.value)
    assert "DOCTORDESK_DATABASE_URL" in message and "DOCTORDESK_METRICS_TOKEN" in message
    assert "DOCTORDESK_SECRETS_KEY" in message
    assert "hunter2" not in message and "hunter3" not in message and "hunter4" not in message


def test_settings_that_must_agree_are_checked_together(monkeypatch):
    monkeypatch.setenv("DOCTORDESK_MAX_UPLOAD_BYTES", str(20 * 1024 * 1024))
    with pytest.raises(SettingsError, match="DOCTORDESK_MAX_UPLOAD_BYTES .* DOCTORDESK_MAX_BODY_BYTES"):
        load_settings()
    monkeypatch.delenv("DOCTORDESK_MAX_UPLOAD_BYTES")
    monkeypatch.setenv("DOCTORDESK_PUSH_BACKOFF_SECONDS", "10")
    monkeypatch.setenv("DOCTORDESK_PUSH_BACKOFF_MAX_SECONDS", "5")
    with pytest.raises(SettingsError, match="DOCTORDESK_PUSH_BACKOFF_MAX_SECONDS"):
        load_settings()


def test_the_defaults_and_the_documented_edge_values_are_accepted(monkeypatch):
    assert Settings().chat_page_size == 30
    for variable, value in {
        "DOCTORDESK_CHAT_SEND_PER_MINUTE": "0",  # no limit
        "DOCTORDESK_REFERENCE_CACHE_SECONDS": "0",  # read every time
        "DOCTORDESK_FORWARDED_ALLOW_IPS": "",  # trust no proxy
        "DOCTORDESK_REDIS_URL": "redis://127.0.0.1:6379/0",
    }.items():
        monkeypatch.setenv(variable, value)
    monkeypatch.setenv("DOCTORDESK_FORWARDED_ALLOW_IPS", "10.0.0.0/8, ::1, *")
    load_settings()


# --- the test suite's clock: a moment of its choosing, never in a clinic -------------------------------------------


def test_a_test_clock_is_refused_outside_the_test_environment(monkeypatch):
    monkeypatch.setenv("DOCTORDESK_TEST_CLOCK", "2026-12-06T23:50:00+01:00")
    with pytest.raises(SettingsError, match="DOCTORDESK_TEST_CLOCK is read only when DOCTORDESK_ENVIRONMENT=test"):
        load_settings(warn=False)


@pytest.mark.parametrize(
    "value", ["2026-12-06 23:50:00+01:00", "2026-12-06T23:50:00", "1796000000", "x@1", "2026-12-06T23:50:00Z@soon"]
)
def test_a_test_clock_that_is_not_an_instant_is_named(monkeypatch, value):
    monkeypatch.setenv("DOCTORDESK_ENVIRONMENT", "test")
    monkeypatch.setenv("DOCTORDESK_TEST_CLOCK", value)
    with pytest.raises(SettingsError, match="DOCTORDESK_TEST_CLOCK"):
        load_settings(warn=False)


def test_the_service_clock_reads_the_test_moment_and_runs_on(monkeypatch):
    since = datetime.now(UTC) - timedelta(minutes=10)
    at = datetime(2026, 12, 6, 22, 50, tzinfo=UTC)
    monkeypatch.setenv("DOCTORDESK_ENVIRONMENT", "test")
    monkeypatch.setenv("DOCTORDESK_TEST_CLOCK", clock_setting(at, since=since))
    now = load_settings(warn=False).clock().now()
    # Ten minutes have passed on the system clock since the moment was taken: the service's clock is ten on too.
    assert at + timedelta(minutes=10) <= now < at + timedelta(minutes=11)


def test_without_a_test_clock_the_service_runs_on_the_system_clock(monkeypatch):
    monkeypatch.delenv("DOCTORDESK_TEST_CLOCK", raising=False)
    clock = load_settings(warn=False).clock()
    assert isinstance(clock, SystemClock) and abs(clock.now() - datetime.now(UTC)) < timedelta(seconds=5)


def test_reminder_hours_are_checked_at_start_with_a_clear_message(monkeypatch):
    from doctordesk.config import SettingsError, load_settings

    monkeypatch.setenv("DOCTORDESK_REMINDER_HOURS", "24,0")
    with pytest.raises(SettingsError, match="DOCTORDESK_REMINDER_HOURS='24,0': reminder hours: Whole hours"):
        load_settings()
    monkeypatch.setenv("DOCTORDESK_REMINDER_HOURS", "2, 24")
    assert load_settings().reminder_hours == "24,2"


def test_the_public_url_is_an_http_address(monkeypatch):
    from doctordesk.config import SettingsError, load_settings

    monkeypatch.setenv("DOCTORDESK_PUBLIC_URL", "ftp://clinic.example")
    with pytest.raises(SettingsError, match="DOCTORDESK_PUBLIC_URL"):
        load_settings()
    monkeypatch.setenv("DOCTORDESK_PUBLIC_URL", "https://clinic.example/")
    assert load_settings().link_base == "https://clinic.example"
