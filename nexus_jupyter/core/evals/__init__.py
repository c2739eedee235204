"""Retrieval evals: how well search finds the right tool for labelled queries, for a catalog
as it is configured (:func:`.retrieval.evaluate`, public as ``nexus_jupyter.evaluate``)."""
