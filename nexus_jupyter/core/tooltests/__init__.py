"""Tool tests: saved calls with an expectation, run on demand and after every change.

- :mod:`.cases`: :class:`TestCase` and :class:`Expectation` (the YAML shape of a case);
- :mod:`.compare` and :mod:`.predicate`: how a result is held against an expectation;
- :mod:`.outcomes`: :class:`CaseOutcome`, a tool's :class:`TestStatus`, a run's :class:`TestReport`;
- :mod:`.runner`: runs cases through the registry's public call path;
- :mod:`.stores`: where cases live (the :class:`CaseStore` protocol; files and notebooks are
  source-side);
- :mod:`.monitor`: :class:`ToolTests`, a registry's cases, statuses and live runs
  (``registry.tests``).
"""
