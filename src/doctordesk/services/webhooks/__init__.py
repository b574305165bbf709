"""Webhooks: endpoints, the delivery log, and the outbox written in the change's transaction."""
