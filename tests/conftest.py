"""Shared fixtures: small dumps written on the fly, and the models CI must have."""

from __future__ import annotations

import bz2
import os
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from builder.data.make_sample import dump_xml


@pytest.fixture
def write_dump(tmp_path: Path) -> Callable[..., Path]:
    """Write pages as a dump file; ``.bz2``/``.xml`` by name, ``multistream`` writes one bz2 stream per page."""

    def write(
        pages: list[str],
        name: str = "enwiki-20240101-pages-articles.xml.bz2",
        multistream: bool = False,
        file_namespace: str = "File",
    ) -> Path:
        path = tmp_path / name
        xml = dump_xml(pages, file_namespace)
        if multistream:
            head, _, _ = xml.partition("  <page>")
            streams = [head] + pages + ["</mediawiki>\n"]
            path.write_bytes(b"".join(bz2.compress(stream.encode("utf-8")) for stream in streams))
        elif name.endswith(".bz2"):
            path.write_bytes(bz2.compress(xml.encode("utf-8")))
        else:
            path.write_text(xml, encoding="utf-8")
        return path

    return write


@pytest.fixture(scope="session")
def perceptron_available() -> None:
    """The perceptron tagger with a model, NLTK's or textblob-aptagger's: CI has it, so under CI its absence fails."""
    from builder.filters.tagging import PerceptronTagger, TaggerUnavailable

    try:
        PerceptronTagger()
    except TaggerUnavailable as error:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(str(error))


def require_nltk_perceptron() -> None:
    """Skip (fail under CI) unless the perceptron tags with NLTK's own model, not textblob-aptagger's fallback.

    Offline without NLTK's data the tagger still works, on the older fallback model, with a warning
    and other verdicts: tests of NLTK's model or of its verdicts cannot pass there, and must say why.
    """
    from builder.filters.tagging import NLTK_TAGGER, PerceptronTagger, TaggerUnavailable, TaggerWarning

    reason = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TaggerWarning)  # the fallback's warning; the reason below says it
            tagger = PerceptronTagger()
    except TaggerUnavailable as error:
        reason = str(error)
    else:
        if tagger.model != f"nltk:{NLTK_TAGGER}":
            reason = (
                f"NLTK's {NLTK_TAGGER} model is not on NLTK's search path (NLTK_DATA="
                f"{os.environ.get('NLTK_DATA', 'unset')}) and could not be fetched: the perceptron tags with "
                f"{tagger.model}, whose verdicts differ"
            )
    if reason is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI must have NLTK's tagger model: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def nltk_perceptron() -> None:
    """The perceptron tagger with NLTK's own model: CI has it (NLTK_DATA), so under CI its absence is a failure."""
    require_nltk_perceptron()
