"""The waitlist's use cases (docs/waitlist.md): joining and leaving, freed times offered, offers answered."""
