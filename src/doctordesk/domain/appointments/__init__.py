"""Appointments: statuses, transitions, who sees what, the list's sections and filter, notices."""
