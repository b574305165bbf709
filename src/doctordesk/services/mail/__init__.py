"""Email to patients: composing a change's mail, the outbox it waits in, and its delivery's record."""
