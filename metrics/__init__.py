"""Δsem,syn: how sophisticated paraphrases are (semantic minus syntactic similarity).

:func:`score_pairs` is the Python API; ``metrics/delta_sem_syn`` is the same measure
as an ``evaluate`` module; ``python -m metrics score`` scores files and folders.
"""

from metrics.profiles import ModelUnavailable, Profile, get_profile
from metrics.scoring import MEASURES, score_pairs

__all__ = ["MEASURES", "ModelUnavailable", "Profile", "get_profile", "score_pairs"]
