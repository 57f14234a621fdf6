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


def test_checked_pieces_hand_on_what_replacing_invalid_bytes_gives_wherever_the_pieces_are_cut() -> None:
    """The parser is fed bytes: a character cut by a piece's end is held back, and invalid runs become U+FFFD
    in the bytes handed on, with their places, exactly as decoding the whole with ``replace`` would give."""
    import random

    from builder.sources.compression import checked_pieces
    from builder.sources.files import ReadStats

    chooser = random.Random(5)
    alphabet = [b"a", b"\n", "é".encode(), "€".encode(), "𝄞".encode(), b"\xff", b"\xe2\x82", b"\xc3", b"\x80"]
    for _ in range(300):
        data = b"".join(chooser.choice(alphabet) for _ in range(chooser.randrange(0, 40)))
        cuts = sorted(chooser.sample(range(len(data) + 1), min(len(data) + 1, chooser.randrange(0, 6))))
        pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
        stats = ReadStats()
        handed = []
        places = []
        for _, piece, runs in checked_pieces(((None, piece) for piece in pieces), stats):
            places += [(offset, length) for _, offset, length in runs]
            for index, _, _ in runs:
                assert piece[index : index + 3] == "\ufffd".encode()
            handed.append(piece)
        assert b"".join(handed) == data.decode("utf-8", "replace").encode()
        invalid = sum(length for _, length in places)
        assert stats.invalid_utf8_bytes == invalid
        for offset, length in places:  # each run names bytes that do not decode
            with pytest.raises(UnicodeDecodeError):
                data[offset : offset + length].decode("utf-8")
