"""Fhir: the services of this feature."""
