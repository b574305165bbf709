"""Bulk import and export: the rows' kinds and checks, and safe CSV cells."""
