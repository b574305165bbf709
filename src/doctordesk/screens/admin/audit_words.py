"""The audit trail's codes in words: what each recorded action did and what it was about, for the audit screen.

The trail stores stable codes (``appointment.approve``, ``admin.user-created``); the screen shows the words in the
reader's language beside the code, which stays what the filter and the exports match on. A code without words here
(a new action) is shown as the code itself; ``tests/unit/screens/admin/test_audit_words.py`` finds every code the
services record and fails while one lacks its words.
"""

from __future__ import annotations

from typing import Final

from doctordesk.domain.appointments.decisions import Trigger
from doctordesk.i18n import N_, _

_APPOINTMENT: Final = {
    Trigger.APPROVE: N_("Appointment approved"),
    Trigger.SUGGEST: N_("Alternative times offered"),
    Trigger.AUTO_APPROVE: N_("Approved at the requested time (an alternative matched it)"),
    Trigger.DECLINE: N_("Appointment request declined"),
    Trigger.ACCEPT_OFFER: N_("Offered time accepted"),
    Trigger.REJECT_OFFERS: N_("Offered times rejected"),
    Trigger.REQUEST: N_("Appointment requested"),
    Trigger.CANCEL: N_("Appointment canceled"),
    Trigger.COMPLETE: N_("Appointment completed"),
    Trigger.NO_SHOW: N_("Patient did not come"),
    Trigger.RESCHEDULE_REQUEST: N_("Asked to move the appointment"),
}

ACTIONS: Final[dict[str, str]] = {
    **{f"appointment.{trigger.value}": words for trigger, words in _APPOINTMENT.items()},
    "review.timezone-confirmed": N_("Time zone confirmed"),
    "review.disclaimer-acknowledged": N_("Disclaimer acknowledged"),
    "review.disclaimer-unacknowledged": N_("Disclaimer acknowledgement withdrawn"),
    "login": N_("Signed in"),
    "login-failed": N_("Sign-in failed"),
    "login-throttled": N_("Sign-in refused: too many attempts"),
    "logout": N_("Signed out"),
    "reauthenticated": N_("Confirmed it is them (re-authenticated)"),
    "reauthentication-failed": N_("Re-authentication failed"),
    "reauthentication-throttled": N_("Re-authentication refused: too many attempts"),
    "login-enrolment": N_("Signed in with the password; a second factor must be set up"),
    "login-sso": N_("Signed in through single sign-on"),
    "mfa-totp-started": N_("Authenticator app set-up started"),
    "mfa-totp-enabled": N_("Authenticator app turned on"),
    "mfa-passkey-added": N_("Passkey added"),
    "mfa-recovery-codes-made": N_("Recovery codes made"),
    "recovery-code-used": N_("Recovery code used"),
    "mfa-reset": N_("Second factors reset"),
    "mfa-policy": N_("Second-factor policy changed"),
    "user-created-by-sso": N_("User created by single sign-on"),
    "sso-provider-saved": N_("Single sign-on provider saved"),
    "sso-provider-removed": N_("Single sign-on provider removed"),
    "admin.user-created": N_("User created"),
    "admin.user-updated": N_("User changed"),
    "admin.user-deactivated": N_("User deactivated"),
    "admin.user-reactivated": N_("User reactivated"),
    "admin.doctor-updated": N_("Doctor profile changed"),
    "admin.patient-updated": N_("Patient's email address changed"),
    "admin.password-set": N_("Password set"),
    "admin.password-reset": N_("Password reset"),
    "admin.password-link-created": N_("One-time password link made"),
    "password-link.used": N_("Password set through a one-time link"),
    "admin.location-created": N_("Location created"),
    "admin.location-updated": N_("Location changed"),
    "admin.work-hours-set": N_("Weekly hours set"),
    "admin.hours-exception-added": N_("Hours exception added"),
    "admin.hours-exception-removed": N_("Hours exception removed"),
    "admin.fee-rule-added": N_("Fee version added"),
    "admin.policy-created": N_("Insurance policy created"),
    "admin.policy-updated": N_("Insurance policy changed"),
    "admin.clinic-settings-changed": N_("Clinic settings changed"),
    "appointment.patient-confirm": N_("The patient confirmed they will come"),
    "webhook.create": N_("Webhook endpoint registered"),
    "webhook.update": N_("Webhook endpoint changed"),
    "webhook.enable": N_("Webhook endpoint enabled"),
    "webhook.disable": N_("Webhook endpoint disabled"),
    "webhook.rotate-secret": N_("Webhook signing secret replaced"),
    "webhook.send-test": N_("Webhook test event sent"),
    "webhook.replay": N_("Webhook delivery replayed"),
    "webhook.replay-failed": N_("Webhook delivery replay refused"),
    "fhir-subscription.create": N_("FHIR subscription made"),
    "fhir-subscription.update": N_("FHIR subscription changed"),
    "fhir-subscription.delete": N_("FHIR subscription ended"),
    "fhir-subscription.error": N_("FHIR subscription stopped after failed deliveries"),
    "service-account.create": N_("Service account created"),
    "service-account.deactivate": N_("Service account deactivated"),
    "service-account.reactivate": N_("Service account reactivated"),
    "api-key.create": N_("API key made"),
    "api-key.revoke": N_("API key revoked"),
    "calendar-feed.create": N_("Calendar feed made"),
    "calendar-feed.rotate": N_("Calendar feed address replaced"),
    "calendar-feed.revoke": N_("Calendar feed revoked"),
    "smart-client.register": N_("SMART app registered"),
    "smart-client.deactivate": N_("SMART app deactivated"),
    "smart-client.activate": N_("SMART app reactivated"),
    "smart.consent": N_("SMART app allowed"),
    "smart.consent-denied": N_("SMART app denied"),
    "smart.token": N_("SMART app got its tokens"),
    "smart.refresh-reused": N_("SMART refresh token used again: the grant ended"),
    "smart.revoke": N_("SMART token revoked"),
    "smart.grant-revoked": N_("App access revoked by the user"),
    "smart.system-token": N_("Backend service got a token"),
    "smart.launch": N_("EHR launch of a SMART app for a patient"),
    "session-ended": N_("Session ended from the security page"),
    "signed-out-elsewhere": N_("Signed out everywhere else from the security page"),
    "password-changed": N_("Own password changed"),
    "password-change-failed": N_("Password change failed: wrong current password"),
    "password-change-throttled": N_("Password change refused: too many attempts"),
    "push-device-removed": N_("Phone removed from notifications"),
    "staff-mail-changed": N_("Mail to a staff member changed (address or choices)"),
    "mfa-passkey-removed": N_("Passkey removed"),
    "mfa-totp-disabled": N_("Authenticator app turned off"),
    "import": N_("Data imported"),
    "export.external_ids": N_("Data exported"),
    "waitlist.join": N_("Joined the waitlist"),
    "waitlist.leave": N_("Left the waitlist"),
    "waitlist.accept": N_("Accepted a time from the waitlist"),
    "appointment.waitlist-move": N_("Appointment moved to a time from the waitlist"),
}

ENTITIES: Final[dict[str, str]] = {
    "appointment": N_("Appointment"),
    "user": N_("User"),
    "doctor": N_("Doctor"),
    "location": N_("Location"),
    "fee_rule": N_("Fee rule"),
    "policy": N_("Insurance policy"),
    "webhook_endpoint": N_("Webhook endpoint"),
    "fhir_subscription": N_("FHIR subscription"),
    "service_account": N_("Service account"),
    "api_key": N_("API key"),
    "calendar_feed": N_("Calendar feed"),
    "smart_client": N_("SMART app"),
    "import": N_("Import"),
    "mfa_policy": N_("Second-factor policy"),
    "clinic": N_("Clinic settings"),
    "sso_provider": N_("Single sign-on provider"),
    "waitlist_entry": N_("Waitlist entry"),
    "waitlist_offer": N_("Waitlist offer"),
}


def action_words(action: str) -> str:
    """What the action did, in the reader's language (the code itself when it has no words yet)."""
    words = ACTIONS.get(action)
    return _(words) if words is not None else action


def entity_words(entity: str, entity_id: int | None) -> str:
    """What the entry is about, e.g. "Appointment 12" / "Termin 12"."""
    name = _(ENTITIES[entity]) if entity in ENTITIES else entity
    return f"{name} {entity_id}" if entity_id is not None else name
