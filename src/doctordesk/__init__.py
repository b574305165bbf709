"""doctordesk: the service behind a doctor-facing app."""

__version__ = "0.1.0"
