"""The administration routes: JSON API and screens (admins only)."""
