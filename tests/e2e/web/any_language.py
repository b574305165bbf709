"""Signing in whatever the page's language: the login form's fields by their ids, not by their (translated)
labels."""

from __future__ import annotations

from typing import Any


def sign_in_as(page: Any, username: str, password: str = "demo") -> None:
    page.goto("/")
    page.locator("#login-username").fill(username)
    page.locator("#login-password").fill(password)
    page.locator("#login-submit").click()
    page.locator('[data-id="title"]').wait_for()
