"""Shared fixtures: small dumps written on the fly, and the models CI must have."""

from __future__ import annotations

import bz2
import os
from collections.abc import Callable
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import pytest

SITEINFO = """  <siteinfo>
    <sitename>Wikipedia</sitename>
    <dbname>enwiki</dbname>
    <base>https://en.wikipedia.org/wiki/Main_Page</base>
    <generator>MediaWiki 1.42.0-wmf.1</generator>
    <case>first-letter</case>
    <namespaces>
      <namespace key="0" case="first-letter" />
      <namespace key="1" case="first-letter">Talk</namespace>
      <namespace key="6" case="first-letter">{file_namespace}</namespace>
      <namespace key="10" case="first-letter">Template</namespace>
    </namespaces>
  </siteinfo>
"""


def page_xml(
    title: str, text: str, page_id: int, namespace: int = 0, redirect: str | None = None, revisions: int = 1
) -> str:
    """One ``<page>`` element in the export format, with ``revisions`` revisions of ``text``."""
    redirect_xml = f"    <redirect title={quoteattr(redirect)} />\n" if redirect else ""
    revision_xml = "".join(
        f"""    <revision>
      <id>{page_id * 100 + number}</id>
      <timestamp>2024-01-0{number + 1}T00:00:00Z</timestamp>
      <model>wikitext</model>
      <format>text/x-wiki</format>
      <text bytes="{len(text.encode())}" xml:space="preserve">{escape(text)}</text>
    </revision>
"""
        for number in range(revisions)
    )
    return f"""  <page>
    <title>{escape(title)}</title>
    <ns>{namespace}</ns>
    <id>{page_id}</id>
{redirect_xml}{revision_xml}  </page>
"""


def dump_xml(pages: list[str], file_namespace: str = "File") -> str:
    return (
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">\n'
        + SITEINFO.format(file_namespace=file_namespace)
        + "".join(pages)
        + "</mediawiki>\n"
    )


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
    from builder.tagging import PerceptronTagger, TaggerUnavailable

    try:
        PerceptronTagger()
    except TaggerUnavailable as error:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(str(error))
