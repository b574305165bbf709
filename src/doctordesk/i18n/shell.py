"""The texts of the web app's shell (sign-in, top bar, connection state, the client's own messages): the one part
of the app the server does not render as a screen. The app fetches them in its language (``GET /i18n/texts``)."""

from __future__ import annotations

from doctordesk.domain.texts import N_

LANGUAGE_NAMES = {"en": "English", "de": "Deutsch"}

SHELL_TEXTS: tuple[str, ...] = (
    N_("Skip to content"),
    N_("Back"),
    N_("Back to the appointments"),
    N_("Appointments"),
    N_("Messages"),
    N_("Log out"),
    N_("Language"),
    N_("Sign in"),
    N_("Appointments, decisions and support chat for your practice."),
    N_("Username"),
    N_("Password"),
    N_("Demo accounts: doctor1, support1, patient1 — password demo."),
    N_("Chat"),
    N_("Close the chat panel"),
    N_("Doctor"),
    N_("Support"),
    N_("Administrator"),
    N_("Patient"),
    N_("Your session has ended. Please sign in again."),
    N_("Enter your username and password."),
    N_("Signing in…"),
    N_("The service cannot be reached. Please try again."),
    N_("The service cannot be reached. Retrying shortly."),
    N_("Wrong username or password."),
    N_("Too many attempts. Please wait a few minutes and try again."),
    N_("Live"),
    N_("Reconnecting…"),
    N_("Offline"),
    N_("Polling"),
    N_("Remove"),
    N_("Attach a file"),
    N_("The image could not be loaded."),
    N_("The file could not be downloaded."),
    N_("Choose…"),
    N_("The screen has been loaded again and shows the current state."),
    N_("Something went wrong. Please try again."),
    N_("Dismiss"),
    N_("doctordesk needs JavaScript enabled."),
    N_("Remove attachment"),
    N_("Select and copy the address"),
    N_("Copied"),
    N_("Copied to the clipboard"),
    N_("Could not copy"),
    # The page behind a one-time password link.
    N_("Set your password"),
    N_("This link works once. Choose a password of at least 8 characters."),
    N_("New password"),
    N_("The same password again"),
    N_("Set password"),
    N_("At least 8 characters."),
    N_("The two passwords differ."),
    N_("Your password is set. Sign in with it."),
)
