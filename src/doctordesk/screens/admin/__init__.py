"""The administration screens: users, locations, hours, fees, insurance, webhooks and the audit trail."""
