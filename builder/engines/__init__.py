"""Engines run a build: :mod:`.core` holds everything a build does whatever runs it (checks before
any dump is read, the language and tagger choice, the per-config records, publishing); :mod:`.local`
(worker processes and DuckDB) and :mod:`.spark` (PySpark) only carry out its stages."""
