"""core

Revision ID: 0001
Revises:
Create Date: 2026-11-21

Accounts, clinic reference data, patients and policies, appointments, history, the append-only audit log and
the fee schedule.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


AUDIT_GUARD_SQLITE = (
    "CREATE TRIGGER audit_log_no_{op} BEFORE {OP} ON audit_log "
    "BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END"
)
AUDIT_GUARD_PG_FUNCTION = (
    "CREATE OR REPLACE FUNCTION audit_log_append_only() RETURNS trigger AS $$ "
    "BEGIN RAISE EXCEPTION 'audit_log is append-only'; END; $$ LANGUAGE plpgsql"
)


def _audit_guard() -> None:
    """The audit log is append-only in the database itself, not only by convention."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute(AUDIT_GUARD_PG_FUNCTION)
        op.execute(
            "CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log "
            "FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()"
        )
    else:
        for name in ("update", "delete"):
            op.execute(AUDIT_GUARD_SQLITE.format(op=name, OP=name.upper()))


def upgrade() -> None:
    op.create_table(
        "locations",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("address", sa.String(length=255), nullable=False),
        sa.Column("timezone", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_locations")),
    )
    op.create_table(
        "login_throttle",
        sa.Column("username", sa.String(length=64), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("locked_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("username", name=op.f("pk_login_throttle")),
    )
    op.create_table(
        "users",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("username", sa.String(length=64), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("display_name", sa.String(length=128), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_users")),
        sa.UniqueConstraint("username", name=op.f("uq_users_username")),
    )
    op.create_table(
        "access_tokens",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_access_tokens_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_access_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_access_tokens_token_hash")),
    )
    with op.batch_alter_table("access_tokens", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_access_tokens_user_id"), ["user_id"], unique=False)

    op.create_table(
        "audit_log",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("action", sa.String(length=64), nullable=False),
        sa.Column("entity", sa.String(length=32), nullable=False),
        sa.Column("entity_id", sa.BigInteger(), nullable=True),
        sa.Column("details", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["actor_id"], ["users.id"], name=op.f("fk_audit_log_actor_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_log")),
    )
    with op.batch_alter_table("audit_log", schema=None) as batch_op:
        batch_op.create_index("ix_audit_entity", ["entity", "entity_id"], unique=False)

    op.create_table(
        "doctor_profiles",
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("specialty", sa.String(length=64), nullable=False),
        sa.Column("can_prescribe", sa.Boolean(), nullable=False),
        sa.Column("timezone", sa.String(length=64), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_doctor_profiles_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_doctor_profiles")),
    )
    op.create_table(
        "fee_schedule",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("doctor_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("location_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("amount_cents", sa.Integer(), nullable=False),
        sa.Column("percent", sa.Integer(), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.ForeignKeyConstraint(
            ["doctor_id"], ["users.id"], name=op.f("fk_fee_schedule_doctor_id_users"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["location_id"],
            ["locations.id"],
            name=op.f("fk_fee_schedule_location_id_locations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_fee_schedule")),
    )
    op.create_table(
        "patients",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("birth_date", sa.Date(), nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_patients_user_id_users"), ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_patients")),
        sa.UniqueConstraint("user_id", name=op.f("uq_patients_user_id")),
    )
    op.create_table(
        "work_hours",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("doctor_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("location_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("weekday", sa.Integer(), nullable=False),
        sa.Column("start_time", sa.Time(), nullable=False),
        sa.Column("end_time", sa.Time(), nullable=False),
        sa.ForeignKeyConstraint(
            ["doctor_id"], ["users.id"], name=op.f("fk_work_hours_doctor_id_users"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["location_id"],
            ["locations.id"],
            name=op.f("fk_work_hours_location_id_locations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_work_hours")),
    )
    with op.batch_alter_table("work_hours", schema=None) as batch_op:
        batch_op.create_index("ix_work_hours_doctor_location", ["doctor_id", "location_id", "weekday"], unique=False)

    op.create_table(
        "appointments",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("patient_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("doctor_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("location_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("service", sa.String(length=64), nullable=False),
        sa.Column("start_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("duration_minutes", sa.Integer(), nullable=False),
        sa.Column("status", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("chat_enabled", sa.Boolean(), nullable=False),
        sa.Column("disclaimer_required", sa.Boolean(), nullable=False),
        sa.Column("prescription_needed", sa.Boolean(), nullable=False),
        sa.Column("decline_reason", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["doctor_id"], ["users.id"], name=op.f("fk_appointments_doctor_id_users")),
        sa.ForeignKeyConstraint(["location_id"], ["locations.id"], name=op.f("fk_appointments_location_id_locations")),
        sa.ForeignKeyConstraint(["patient_id"], ["patients.id"], name=op.f("fk_appointments_patient_id_patients")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_appointments")),
    )
    with op.batch_alter_table("appointments", schema=None) as batch_op:
        batch_op.create_index("ix_appointments_doctor_start", ["doctor_id", "start_at"], unique=False)
        batch_op.create_index("ix_appointments_doctor_status", ["doctor_id", "status"], unique=False)
        batch_op.create_index(batch_op.f("ix_appointments_patient_id"), ["patient_id"], unique=False)

    op.create_table(
        "insurance_policies",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("patient_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("insurer", sa.String(length=128), nullable=False),
        sa.Column("policy_number", sa.String(length=64), nullable=False),
        sa.Column("valid_from", sa.Date(), nullable=False),
        sa.Column("valid_to", sa.Date(), nullable=False),
        sa.Column("network", sa.JSON(), nullable=False),
        sa.Column("exclusions", sa.JSON(), nullable=False),
        sa.Column("third_party_data", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["patient_id"],
            ["patients.id"],
            name=op.f("fk_insurance_policies_patient_id_patients"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_insurance_policies")),
    )
    with op.batch_alter_table("insurance_policies", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_insurance_policies_patient_id"), ["patient_id"], unique=False)

    op.create_table(
        "appointment_history",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("appointment_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("from_status", sa.Integer(), nullable=True),
        sa.Column("to_status", sa.Integer(), nullable=False),
        sa.Column("details", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["actor_id"], ["users.id"], name=op.f("fk_appointment_history_actor_id_users")),
        sa.ForeignKeyConstraint(
            ["appointment_id"],
            ["appointments.id"],
            name=op.f("fk_appointment_history_appointment_id_appointments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_appointment_history")),
    )
    with op.batch_alter_table("appointment_history", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_appointment_history_appointment_id"), ["appointment_id"], unique=False)
    _audit_guard()


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS audit_log_append_only ON audit_log")
        op.execute("DROP FUNCTION IF EXISTS audit_log_append_only()")
    with op.batch_alter_table("appointment_history", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_appointment_history_appointment_id"))

    op.drop_table("appointment_history")
    with op.batch_alter_table("insurance_policies", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_insurance_policies_patient_id"))

    op.drop_table("insurance_policies")
    with op.batch_alter_table("appointments", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_appointments_patient_id"))
        batch_op.drop_index("ix_appointments_doctor_status")
        batch_op.drop_index("ix_appointments_doctor_start")

    op.drop_table("appointments")
    with op.batch_alter_table("work_hours", schema=None) as batch_op:
        batch_op.drop_index("ix_work_hours_doctor_location")

    op.drop_table("work_hours")
    op.drop_table("patients")
    op.drop_table("fee_schedule")
    op.drop_table("doctor_profiles")
    with op.batch_alter_table("audit_log", schema=None) as batch_op:
        batch_op.drop_index("ix_audit_entity")

    op.drop_table("audit_log")
    with op.batch_alter_table("access_tokens", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_access_tokens_user_id"))

    op.drop_table("access_tokens")
    op.drop_table("users")
    op.drop_table("login_throttle")
    op.drop_table("locations")
