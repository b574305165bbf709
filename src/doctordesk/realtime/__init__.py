"""Real-time delivery: the event bus, presence, the SSE stream and push notifications."""
