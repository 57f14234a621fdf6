"""The decoders of compressed history dumps: the fastest one installed, the same pages and errors from each."""

from __future__ import annotations

from pathlib import Path

import py7zr
import pytest

import builder.sources.compression
from builder.data.make_sample import page_xml
from builder.sources.files import DumpError
from builder.sources.xml import iter_pages

TEXTS = [f"revision {number} [[File:A.jpg|thumb|A caption]]" for number in range(300)]


def seven_zip(write_dump, tmp_path: Path) -> Path:
    plain = write_dump([page_xml("Alpha", TEXTS, 1), page_xml("Beta", TEXTS[:3], 2)], name="dump.xml")
    archive = tmp_path / "enwiki-20240101-pages-meta-history1.xml.7z"
    with py7zr.SevenZipFile(archive, "w") as writer:
        writer.write(plain, arcname="enwiki-20240101-pages-meta-history1.xml")
    return archive


def test_7z_is_read_by_libarchive_when_installed(write_dump, tmp_path: Path, monkeypatch) -> None:
    archive = seven_zip(write_dump, tmp_path)
    by_py7zr = [(page.title, page.revision_id, page.text) for page in iter_pages(archive)]
    assert builder.sources.compression._libarchive_works()

    def no_py7zr(path: Path) -> None:
        raise AssertionError("py7zr was used though libarchive is installed")

    monkeypatch.setattr(builder.sources.compression, "_sevenzip_chunks", no_py7zr)
    by_libarchive = [(page.title, page.revision_id, page.text) for page in iter_pages(archive)]
    assert by_libarchive == by_py7zr
    assert len(by_libarchive) == 303


@pytest.mark.parametrize("libarchive", [True, False], ids=["libarchive", "py7zr"])
def test_a_truncated_7z_is_a_dump_error_from_either_decoder(
    write_dump, tmp_path: Path, monkeypatch, libarchive
) -> None:
    archive = seven_zip(write_dump, tmp_path)
    expected = [(page.title, page.revision_id) for page in iter_pages(archive)]
    monkeypatch.setattr(builder.sources.compression, "_libarchive_works", lambda: libarchive)
    assert [(page.title, page.revision_id) for page in iter_pages(archive)] == expected
    data = archive.read_bytes()
    archive.write_bytes(data[: len(data) // 2])
    with pytest.raises(DumpError, match=r"history1\.xml\.7z: cannot read the 7z archive"):
        list(iter_pages(archive))
