"""Appointments: the domain of this feature."""
