"""Email to patients: the relay's address, which changes mail whom, and the messages themselves (pure, no I/O)."""
