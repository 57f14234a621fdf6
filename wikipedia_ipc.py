"""Wikipedia-IPC: mine paraphrase pairs from Wikipedia image captions.

Two ways in:

* the command line, which writes a Hub-ready dataset folder and pushes it to the Hub::

      python wikipedia_ipc.py download enwiki --date latest
      python wikipedia_ipc.py build [DUMP|FOLDER ...] --configs gold silver --output wikipedia_ipc
      python wikipedia_ipc.py push wikipedia_ipc USER/wikipedia-ipc

  and then ``datasets.load_dataset("wikipedia_ipc", "gold")``;
* the ``datasets`` builder :class:`WikipediaIPC`, for code that wants a
  ``Dataset`` straight from a dump::

      WikipediaIPC(config_name="gold", dump_paths=[...]).download_and_prepare()

* Python: :func:`build` (or :func:`build_spark`) with :class:`PipelineConfig` presets
  (:data:`GOLD`, :data:`SILVER`, :data:`BRONZE`, :data:`CROSSLINGUAL`) and :class:`BuildOptions`::

      from wikipedia_ipc import GOLD, SILVER, BuildOptions, build
      report = build(["enwiki-…-pages-articles.xml.bz2"], [GOLD, SILVER], "wikipedia_ipc", BuildOptions(workers=4))

  and :func:`released_pairs` for the authors' released corpus.

With no dump given, the command line and the builder use the small sample dump that ships with the package.
This file is the entry: the command line lives in :mod:`builder.cli` (its parser, the one mapping of its options
onto configs, its commands), the ``datasets`` builder in :mod:`builder.dataset_builder`, the engines in
:mod:`builder.engines` (:mod:`~builder.engines.local`, the package :mod:`~builder.engines.spark`). Scoring is
:mod:`metrics` (``evaluate.load("delta_sem_syn")``).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from builder.cli import command_parser, main
from builder.common import lazy_attributes
from builder.config import (
    BRONZE,
    CAPTIONS,
    CROSSLINGUAL,
    DEJA,
    DEJA_PARACAPTION,
    DEJA_PARAPHRASES,
    GOLD,
    PRESETS,
    REFERENCES,
    SILVER,
    WEB,
    BuildOptions,
    PipelineConfig,
    preset,
)
from builder.sources.download import download

if TYPE_CHECKING:
    from builder.dataset_builder import WikipediaIPC, WikipediaIPCConfig, released_pairs
    from builder.engines.core import BuildReport
    from builder.engines.local import build
    from builder.engines.spark import build_spark
    from builder.publish.card import SAMPLE_DUMP

__all__ = [
    "BRONZE",
    "CAPTIONS",
    "CROSSLINGUAL",
    "DEJA",
    "DEJA_PARACAPTION",
    "DEJA_PARAPHRASES",
    "GOLD",
    "PRESETS",
    "REFERENCES",
    "WEB",
    "SAMPLE_DUMP",
    "SILVER",
    "BuildOptions",
    "BuildReport",
    "PipelineConfig",
    "WikipediaIPC",
    "WikipediaIPCConfig",
    "build",
    "build_spark",
    "command_parser",
    "download",
    "main",
    "preset",
    "released_pairs",
]

# Names whose modules load datasets, DuckDB or PySpark: imported when first used, so that the command line
# reads its arguments (and answers --help) before any of them is loaded.
_LAZY = {
    "BuildReport": "builder.engines.core",
    "SAMPLE_DUMP": "builder.publish.card",
    "WikipediaIPC": "builder.dataset_builder",
    "WikipediaIPCConfig": "builder.dataset_builder",
    "build": "builder.engines.local",
    "build_spark": "builder.engines.spark",
    "released_pairs": "builder.dataset_builder",
}


__getattr__ = lazy_attributes(__name__, _LAZY)


if __name__ == "__main__":
    sys.exit(main())
