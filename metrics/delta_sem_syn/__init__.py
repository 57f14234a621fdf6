"""The ``evaluate`` module of Δsem,syn (a package so that installed copies ship it)."""
