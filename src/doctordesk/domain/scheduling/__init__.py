"""Scheduling: Suggested Scheduling's alternatives, free times and the patient's booking choice."""
