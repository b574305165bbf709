"""Booking: the services of this feature."""
