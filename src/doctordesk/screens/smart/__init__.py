"""SMART App Launch screens: the consent page an app's launch opens (docs/smart.md#consent)."""
