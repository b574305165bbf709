"""Appointments: the services of this feature."""
