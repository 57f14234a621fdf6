"""Δsem,syn: how sophisticated paraphrases are (semantic minus syntactic similarity).

:func:`score_pairs` is the Python API; :func:`load` (or ``evaluate.load(MODULE_PATH)``, or
``evaluate.load("delta_sem_syn")`` from the repository root) gives the same measure as an
``evaluate`` module; ``python -m metrics score`` scores files and folders.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from metrics.profiles import ModelUnavailable, Profile, get_profile

if TYPE_CHECKING:
    from metrics.scoring import MEASURES, score_pairs

MODULE_PATH = str(Path(__file__).resolve().parent / "delta_sem_syn" / "delta_sem_syn.py")


def load(**kwargs: object):  # noqa: ANN201 - an evaluate.EvaluationModule; evaluate is imported lazily
    """``evaluate.load`` of the Δsem,syn module, from wherever the package is installed."""
    import evaluate

    return evaluate.load(MODULE_PATH, **kwargs)


def __getattr__(name: str) -> object:
    """``score_pairs`` and ``MEASURES`` on first use: the scorer loads torch, which a command's ``--help``
    (``benchmarks/compare.py --help`` imports this package) should not wait for."""
    if name in ("MEASURES", "score_pairs"):
        from metrics import scoring

        return getattr(scoring, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["MEASURES", "MODULE_PATH", "ModelUnavailable", "Profile", "get_profile", "load", "score_pairs"]
