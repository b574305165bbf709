"""The app asks an action's confirmation in the page (a modal dialog, dialogs.js), not through the browser's
window.confirm: these answer it as a user does."""

from __future__ import annotations

from typing import Any

OPEN = "dialog.confirm[open]"


def answer(page: Any, *, yes: bool = True) -> str:
    """Waits for the question, answers it (its confirm button, or "Back") and returns the question asked."""
    dialog = page.locator(OPEN)
    dialog.wait_for()
    question: str = dialog.locator(".modal-title").inner_text()
    dialog.locator(".confirm-yes" if yes else ".confirm-no").click()
    dialog.wait_for(state="detached")
    return question
