"""Settings: a DOCTORDESK_* variable that names no setting is reported, never silently taken for one."""

from __future__ import annotations

from doctordesk.config import Settings, unknown_variables


def test_variables_naming_no_setting_are_reported_and_settings_are_not():
    environ = {
        "DOCTORDESK_SECRET_KEY": "x",  # retired: nothing used it
        "DOCTORDESK_ENVIRONMENT": "production",  # retired with it
        "DOCTORDESK_PORT": "8001",
        "doctordesk_redis_url": "redis://localhost",  # names are case-insensitive, like the settings' own parsing
        "DOCTORDESK_REDIS_URLS": "redis://localhost",
        "PATH": "/usr/bin",
    }
    assert unknown_variables(environ) == ["DOCTORDESK_ENVIRONMENT", "DOCTORDESK_REDIS_URLS", "DOCTORDESK_SECRET_KEY"]


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
    assert not {"secret_key", "environment"} & set(Settings.model_fields)
    assert unknown_variables({f"DOCTORDESK_{name.upper()}": "1" for name in Settings.model_fields}) == []
