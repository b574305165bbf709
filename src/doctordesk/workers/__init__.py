"""Background work above the services: the outboxes' dispatchers, the reminders, the waitlist's rounds, token checks,
login-throttle pruning, and the shape every background task has (``background.py``; assembled by ``bootstrap.py``)."""
