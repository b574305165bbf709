"""Single sign-on configuration (docs/administration.md#single-sign-on, docs/accounts.md#single-sign-on): issuers
are https — plain http only with the development setting and on a loopback host — at the JSON API and on the
admin screen, which lists, adds, changes and deletes providers through the same service (SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from sqlalchemy import func, select

from doctordesk.config import Settings
from doctordesk.store.mfa_tables import SsoProvider
from doctordesk.store.tables import AuditLog
from tests.support.errors import assert_error
from tests.support.review import find

SCREEN = "/profile/admin/sso"
BODY = {"name": "Clinic Login", "client_id": "doctordesk", "client_secret": "s3cret"}
FORM = {
    "name": "Clinic Login", "issuer": "https://login.example.org/realms/clinic", "client_id": "doctordesk",
    "client_secret": "s3cret", "match_claim": "email", "match_field": "username", "role_claim": "groups",
    "role_map": "staff=support, it=admin", "default_role": "", "create_users": "true", "active": "true",
}  # fmt: skip


async def providers(runtime) -> list[SsoProvider]:
    async with runtime.db.read() as session:
        return list(await session.scalars(select(SsoProvider).order_by(SsoProvider.id)))


async def audited(runtime) -> int:
    async with runtime.db.read() as session:
        return int(await session.scalar(select(func.count()).select_from(AuditLog)) or 0)


async def test_a_plain_http_issuer_is_refused_with_a_clear_message(client, login, runtime):
    admin = await login("admin")
    body = {**BODY, "issuer": "http://idp.example.com"}
    refused = assert_error(
        await client.put("/admin/sso-providers/clinic", json=body, headers=admin.headers), 422,
        "FIELDS_VALIDATION_ERROR",
    )  # fmt: skip
    assert set(refused["fields"]) == {"issuer"} and "https://" in refused["fields"]["issuer"]
    assert await providers(runtime) == []


class TestTheDevelopmentSetting:
    @pytest.fixture
    def settings(self, database_url, settings_factory):
        return settings_factory(
            database_url, environment="development", sso_allow_http_loopback=True, sso_allow_private_addresses=True
        )

    @pytest.mark.parametrize("issuer", ["http://127.0.0.1:9000/op", "http://localhost:8080", "http://[::1]:9000"])
    async def test_lets_http_through_on_a_loopback_host(self, client, login, issuer):
        admin = await login("admin")
        body = {**BODY, "issuer": issuer}
        saved = await client.put("/admin/sso-providers/dev", json=body, headers=admin.headers)
        assert saved.status_code == 200, saved.text

    @pytest.mark.parametrize("issuer", ["http://idp.example.com", "http://10.1.2.3", "http://127.0.0.1.example.org"])
    async def test_but_not_elsewhere(self, client, login, issuer):
        admin = await login("admin")
        refused = assert_error(
            await client.put("/admin/sso-providers/dev", json={**BODY, "issuer": issuer}, headers=admin.headers),
            422, "FIELDS_VALIDATION_ERROR",
        )  # fmt: skip
        assert "this machine" in refused["fields"]["issuer"]


def test_the_development_setting_is_refused_in_production(tmp_path):
    with pytest.raises(ValidationError, match="SSO_ALLOW_HTTP_LOOPBACK"):
        Settings(data_dir=tmp_path, sso_allow_http_loopback=True)


async def test_only_admins_see_the_screen(client, login):
    for user in ("doctor1", "support1", "patient1"):
        someone = await login(user)
        assert_error(await client.put(SCREEN, headers=someone.headers), 404, "NOT_FOUND")
        assert_error(await client.post(f"{SCREEN}/create", data=FORM, headers=someone.headers), 404, "NOT_FOUND")


async def test_an_admin_adds_changes_and_deletes_a_provider_on_the_screen(client, login, runtime):
    admin = await login("admin")
    empty = (await client.put(SCREEN, headers=admin.headers)).json()
    assert find(empty["elements"], "no-providers").get("visible", True) is True
    added = await client.post(f"{SCREEN}/create", data={**FORM, "slug": "clinic"}, headers=admin.headers)
    assert added.status_code == 200, added.text
    [row] = await providers(runtime)
    assert (row.issuer, row.role_map, row.create_users) == (FORM["issuer"], {"staff": "support", "it": "admin"}, True)
    assert row.client_secret == "s3cret"

    page = (await client.put(SCREEN, headers=admin.headers)).json()
    assert find(page["elements"], "clinic-issuer")["value"] == FORM["issuer"]
    assert find(page["elements"], "clinic-client-secret")["value"] == ""  # never shown
    assert find(page["elements"], "clinic-role-map")["value"] == "staff=support, it=admin"

    changed = {**FORM, "name": "Clinic SSO", "client_secret": "", "active": "false"}
    assert (await client.post(f"{SCREEN}/clinic", data=changed, headers=admin.headers)).status_code == 200
    [row] = await providers(runtime)
    assert (row.name, row.active, row.client_secret) == ("Clinic SSO", False, "s3cret")  # empty: kept

    assert (await client.post(f"{SCREEN}/clinic/delete", headers=admin.headers)).status_code == 200
    assert await providers(runtime) == []
    async with runtime.db.read() as session:
        done = list(await session.scalars(select(AuditLog.action).where(AuditLog.entity == "sso_provider")))
    assert done == ["sso-provider-saved", "sso-provider-saved", "sso-provider-removed"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"issuer": "http://login.example.org"}, "issuer"),
        ({"issuer": "https://10.0.0.5/op"}, "issuer"),
        ({"name": "x" * 65}, "name"),
        ({"match_claim": "e mail"}, "match_claim"),
        ({"role_map": "staff"}, "role_map"),
        ({"role_map": "staff=doctor"}, "role_map"),
        ({"default_role": "patient"}, "default_role"),
        ({"client_secret": ""}, "client_secret"),
        ({"slug": "Clinic!"}, "slug"),
    ],
)
async def test_a_refused_form_names_the_field_and_writes_nothing(client, login, runtime, change, field):
    admin = await login("admin")
    before = await audited(runtime)
    form = {**FORM, "slug": "clinic", **change}
    refused = assert_error(
        await client.post(f"{SCREEN}/create", data=form, headers=admin.headers), 422, "FIELDS_VALIDATION_ERROR"
    )
    assert field in refused["fields"]
    assert await providers(runtime) == [] and await audited(runtime) == before


async def test_changing_an_unknown_provider_is_not_found_and_creates_nothing(client, login, runtime):
    admin = await login("admin")
    assert_error(await client.post(f"{SCREEN}/ghost", data=FORM, headers=admin.headers), 404, "NOT_FOUND")
    assert await providers(runtime) == []
