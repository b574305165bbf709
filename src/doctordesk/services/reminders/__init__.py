"""Reminders before approved appointments and the links in them (docs/notifications.md#reminders)."""
