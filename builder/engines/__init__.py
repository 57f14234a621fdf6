"""Engines run a build: one core and two drivers. :mod:`.core` holds everything a build does whatever runs it
(checks before any dump is read, the language and tagger choice, the per-config records, publishing); the drivers
only carry out its stages: :mod:`.local` (worker processes and DuckDB) and the package :mod:`.spark` (PySpark)."""
