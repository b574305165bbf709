"""Fhir: the domain of this feature."""
