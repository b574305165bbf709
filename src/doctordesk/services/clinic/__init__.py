"""The clinic's own settings (docs/administration.md#clinic-settings)."""
