"""In-process caches the runtime holds: verified tokens and API keys, push devices, batched token reads."""
