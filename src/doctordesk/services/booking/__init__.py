"""The patient's booking: the screen and free times."""
