"""Long calls that run as tasks: their state (:mod:`.store`)."""
