"""Jinja2 mode: instruction providers for templates that need loops and conditions, rendered in a sandbox
that reads state only and bounds what a template may spend.

Its modules, each importing only those before it: `budget` (the limits of a render and what counts as
data; no Jinja2), `filters` (the size-checked filters), `sandbox` (read-only state views, the allowlists,
the budget-charging environment), `mode` (`jinja()`, `JinjaProvider` and the `JinjaError` family). The
public names are importable from `templating` (`templating.jinja`, `templating.JinjaBudget`, ...);
importing this package alone loads none of them, nor Jinja2.
"""
