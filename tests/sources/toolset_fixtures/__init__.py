"""Modules that toolset tests load through ``module:`` and entry points."""
