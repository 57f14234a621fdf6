"""Shared fixtures: small dumps written on the fly, and the models CI must have."""

from __future__ import annotations

import bz2
import os
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
    """The NLTK perceptron model: CI has it (NLTK_DATA), so under CI its absence is a failure."""
    from builder.filters.tagging import PerceptronTagger, TaggerUnavailable

    try:
        PerceptronTagger()
    except TaggerUnavailable as error:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(str(error))
