"""Fhir: the routers of this feature."""
