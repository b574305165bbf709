"""Webhooks: which events become which types, endpoint addresses, what admins see."""
