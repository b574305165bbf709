"""Storage: SQLAlchemy tables, the database handle, migrations and demo data."""
