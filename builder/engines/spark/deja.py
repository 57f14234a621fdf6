"""What Spark's executors run for Déjà's rules (§2): each Python worker judges the sentences of its partitions with
its own tagger and WordNet, each loaded once per worker (:class:`.engine.SparkEngine` drives it)."""

from __future__ import annotations

import functools
import gc
from collections.abc import Iterable, Iterator

from builder.filters.captions import text_batches
from builder.filters.repetition import SENTENCE_SCHEMA, judge_texts
from builder.filters.tagging import Tagger, get_tagger
from builder.lang.wordnet import WordNet, load_wordnet

__all__ = ["judge_partition"]


@functools.lru_cache(maxsize=1)
def _worker_judges(tagger_name: str, language: str) -> tuple[Tagger, WordNet]:
    """The worker's tagger and WordNet (seconds to load), built once per worker and kept out of the garbage
    collector's view, as the caption rule's tagger is."""
    judges = (get_tagger(tagger_name, language), load_wordnet())
    gc.freeze()
    return judges


def judge_partition(tagger_name: str, language: str, texts: Iterable[str]) -> Iterator[tuple]:
    """Déjà's rules on the sentences of a partition's texts (:func:`builder.filters.repetition.judge_texts`), as
    tuples in :data:`builder.filters.repetition.SENTENCE_SCHEMA`'s order."""
    columns = SENTENCE_SCHEMA.names
    for batch in text_batches(texts):
        rows = judge_texts(language, batch, *_worker_judges(tagger_name, language))
        yield from (tuple(row[column] for column in columns) for row in rows)
