"""Bulk import and export of the clinic's data."""
