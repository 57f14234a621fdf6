"""Δsem,syn for ``evaluate.load("delta_sem_syn")`` run from the repository root.

evaluate resolves a local name ``X`` to ``X/X.py``; the module itself is
``metrics/delta_sem_syn/delta_sem_syn.py`` (``metrics.MODULE_PATH``), named here.
"""

from metrics.delta_sem_syn.delta_sem_syn import DeltaSemSyn

__all__ = ["DeltaSemSyn"]
