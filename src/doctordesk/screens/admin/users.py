"""Administration screens for people: the user list (filtered by role, a page at a time), a new user, and one
user's page (name, doctor profile, deactivation, a new password shown once)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

from doctordesk.domain.roles import Role
from doctordesk.domain.scheduling.suggestions import timezone_names
from doctordesk.i18n import N_, _
from doctordesk.screens.admin.pages import BASE, notice, page
from doctordesk.screens.protocol import Action, Element, Layout, Option, Page, el

LIST_SCREEN = "admin-users"
NEW_SCREEN = "admin-user-new"
USER_SCREEN = "admin-user"
USERS = f"{BASE}/users"
NEW = f"{USERS}/new"
PAGE_SIZE = 50

ROLE_LABELS = {
    "doctor": N_("Doctor"),
    "support": N_("Support agent"),
    "patient": N_("Patient"),
    "admin": N_("Administrator"),
}


def list_endpoint(role: str | None = None, after: int | None = None) -> str:
    query = {k: str(v) for k, v in (("role", role), ("after", after)) if v is not None}
    return f"{USERS}?{urlencode(query)}" if query else USERS


def user_endpoint(user_id: int) -> str:
    return f"{USERS}/{user_id}"


@dataclass(frozen=True, slots=True)
class UserRow:
    id: int
    username: str
    display_name: str
    role: str
    active: bool
    specialty: str | None = None
    timezone: str | None = None
    can_prescribe: bool | None = None
    chat_enabled: bool | None = None
    email: str | None = None  # patients only


def _role_options(*, any_role: bool) -> list[Option]:
    options = [Option("", _("Every role"))] if any_role else []
    return options + [Option(r.value, _(ROLE_LABELS[r.value])) for r in Role]


def render_list(
    rows: Sequence[UserRow],
    *,
    role: str | None,
    after: int | None,
    next_after: int | None,
    layout: Layout,
    timeout: int,
) -> Page:
    items = [
        el(
            f"user-{u.id}",
            "Row",
            el(f"user-name-{u.id}", "Regular", label=_("Name"), value=u.display_name),
            el(f"user-username-{u.id}", "Regular", label=_("Username"), value=u.username),
            el(f"user-role-{u.id}", "Regular", label=_("Role"), value=_(ROLE_LABELS.get(u.role, u.role))),
            el(
                f"user-active-{u.id}",
                "Badge",
                value=_("Active") if u.active else _("Deactivated"),
                props={"tone": "ok" if u.active else "muted"},
            ),
            el(f"open-user-{u.id}", "Link", label=_("Open"), action=Action("PUT", user_endpoint(u.id))),
        )
        for u in rows
    ]
    elements = [
        el("new-user", "Link", label=_("New user"), action=Action("PUT", NEW)),
        el(
            "filter",
            "Section",
            el(
                "role",
                "Combo",
                label=_("Role"),
                name="role",
                value=role or "",
                options=_role_options(any_role=True),
                action=Action("PATCH", f"{USERS}/filter", form="filter"),
            ),
            label=_("Filter"),
        ),
        el(
            "users",
            "Section",
            el("users-empty", "Caption", value=_("No users."), visible=not items),
            *items,
            el("first-page", "Link", label=_("First page"), visible=after is not None,
               action=Action("PUT", list_endpoint(role))),
            el("next-page", "Link", label=_("Next page"), visible=next_after is not None,
               action=Action("PUT", list_endpoint(role, next_after))),
            label=_("Users"),
        ),
    ]  # fmt: skip
    return page(
        screen=LIST_SCREEN, current="users", title=_("Users"), endpoint=list_endpoint(role, after),
        elements=elements, layout=layout, timeout=timeout,
    )  # fmt: skip


def _zones(current: str | None) -> list[Option]:
    names = timezone_names()
    if current and current not in names:
        names = [current, *names]
    return [Option("", _("None yet (asked when they first suggest a time)")), *(Option(z, z) for z in names)]


def _doctor_fields(prefix: str, u: UserRow | None) -> list[Element]:
    return [
        el(f"{prefix}specialty", "Edit", label=_("Specialty (doctors)"), name="specialty",
           value=u.specialty if u else None),
        # Chosen from the IANA list (type to search), never typed free.
        el(f"{prefix}timezone", "Timezone", label=_("Time zone (doctors)"), name="timezone",
           value=u.timezone if u and u.timezone else "", options=_zones(u.timezone if u else None),
           props={"searchable": True}),
        el(f"{prefix}can-prescribe", "Checkbox", label=_("Can prescribe"), name="can_prescribe",
           value=u.can_prescribe if u and u.can_prescribe is not None else True),
        el(f"{prefix}chat-enabled", "Checkbox", label=_("Chat enabled"), name="chat_enabled",
           value=u.chat_enabled if u and u.chat_enabled is not None else True),
    ]  # fmt: skip


def render_new(*, layout: Layout, timeout: int) -> Page:
    form = el(
        "user-form",
        "Section",
        el("new-role", "Combo", label=_("Role"), name="role", value="doctor", options=_role_options(any_role=False)),
        el("new-username", "Edit", label=_("Username"), name="username"),
        el("new-display-name", "Edit", label=_("Name"), name="display_name"),
        el(
            "new-password",
            "Password",
            label=_("Password (leave empty: they set their own through a one-time link)"),
            name="password",
        ),
        *_doctor_fields("new-", None),
        el("new-email", "Edit", label=_("Email address (patients)"), name="email"),
        el("create", "Button", label=_("Create user"), action=Action("POST", f"{USERS}/create", form="user-form")),
        label=_("New user"),
    )
    return page(
        screen=NEW_SCREEN, current="users", title=_("New user"), endpoint=NEW,
        elements=[form], layout=layout, timeout=timeout,
    )  # fmt: skip


def render_user(user: UserRow, *, layout: Layout, timeout: int, staff_email: str | None = None) -> Page:
    """``staff_email``: a doctor's or support member's own mail address (docs/notifications.md#staff-mail)."""
    base = user_endpoint(user.id)
    profile: list[Element] = [
        el("user-username", "Regular", label=_("Username"), value=user.username),
        el("user-role", "Regular", label=_("Role"), value=_(ROLE_LABELS.get(user.role, user.role))),
        el("user-status", "Badge", value=_("Active") if user.active else _("Deactivated"),
           props={"tone": "ok" if user.active else "muted"}),
        el("display-name", "Edit", label=_("Name"), name="display_name", value=user.display_name),
    ]  # fmt: skip
    if user.role == Role.DOCTOR.value:
        profile += _doctor_fields("", user)
    if user.role == Role.PATIENT.value:
        profile.append(el("email", "Edit", label=_("Email address"), name="email", value=user.email or ""))
    if user.role in (Role.DOCTOR.value, Role.SUPPORT.value):
        profile.append(el("email", "Edit", label=_("Email address for their notifications"), name="email",
                          value=staff_email or ""))  # fmt: skip
    profile.append(el("save", "Button", label=_("Save"), action=Action("POST", f"{base}/save", form="profile")))
    account = el(
        "account",
        "Section",
        el(
            "toggle-active",
            "Button",
            label=_("Deactivate") if user.active else _("Reactivate"),
            # Destructive actions look it (and ask first).
            props={"tone": "danger"} if user.active else None,
            action=Action(
                "POST",
                f"{base}/{'deactivate' if user.active else 'reactivate'}",
                confirm=_("Deactivate {name}? They are signed out everywhere at once.", name=user.display_name)
                if user.active
                else _("Reactivate {name}?", name=user.display_name),
            ),
        ),
        el(
            "reset-password",
            "Button",
            label=_("Reset password"),
            props={"tone": "danger"},
            action=Action(
                "POST", f"{base}/password", confirm=_("Give this user a new password? They are signed out everywhere.")
            ),
        ),
        el(
            "password-link",
            "Button",
            label=_("One-time link to set a password"),
            visible=user.active,
            action=Action("POST", f"{base}/password-link"),
        ),
        notice("new-password"),
        # Filled in with the one-time link by the action's answer only.
        el("copy-link", "Button", label=_("Copy link"), visible=False),
        label=_("Account"),
    )
    return page(
        screen=USER_SCREEN, current="users", title=user.display_name, endpoint=base,
        elements=[notice("saved"), el("profile", "Section", *profile, label=_("Profile")), account],
        layout=layout, timeout=timeout,
    )  # fmt: skip
