"""Toolsets: named groups of tools with shared settings (enabled, a name prefix, an approval
map, a permission ceiling). :mod:`.settings` is the ``toolsets:`` key of nex.yaml;
:mod:`.shape` applies one toolset's settings to the tools its source loaded."""
