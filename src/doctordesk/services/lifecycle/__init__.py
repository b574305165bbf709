"""An appointment's lifecycle, shared by every feature that creates or changes one: placing a request and
recording its origin (``placing``), and every status transition (``transitions``)."""
