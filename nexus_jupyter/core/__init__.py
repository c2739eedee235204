"""The core: tool model, schema, registry, search, policy. Plain Python, no Jupyter imports."""
