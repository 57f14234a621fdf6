"""benchmarks/warc_peer.py: the peer's output protocol, the comparison, and our side on a real WARC file.

No Java here: the peer's side is its recorded output on ``whirlwind.warc.gz`` (the authors' mapper, jwarc
0.12.0 and jsoup, run once by hand), replayed by a stand-in process where a whole run is tested.
"""

from __future__ import annotations

import collections
import json
import shlex
import sys
from pathlib import Path

import pytest

from benchmarks.warc_peer import (
    compare,
    compare_file,
    main,
    normalise_text,
    pair_leftovers,
    parse_peer_output,
    run_ours,
    unescape,
    uri_key,
)

REAL = Path(__file__).parent / "data" / "web" / "whirlwind.warc.gz"
PAGE = "https://an.wikipedia.org/wiki/Escopete"
UP = "https://upload.wikimedia.org/wikipedia/commons/thumb"
STATIC = "https://an.wikipedia.org/static/images"
# What the peer printed for whirlwind.warc.gz: 13 references, 7 with an alt text.
RECORDED = "\n".join(
    [
        f"#page\t{PAGE}\ttext/html; charset=UTF-8",
        f"{PAGE}\t{STATIC}/icons/wikipedia.png\t",
        f"{PAGE}\t{STATIC}/mobile/copyright/wikipedia-wordmark-an.svg\tBiquipedia",
        f"{PAGE}\t{STATIC}/mobile/copyright/wikipedia-tagline-an.svg\tA enciclopedia libre",
        f"{PAGE}\t{UP}/3/37/Translate_icon.svg/35px-Translate_icon.svg.png\t",
        f"{PAGE}\t{UP}/0/0a/Escudo_de_Escopete_%28Guadalajara%29.svg/70px-Escudo_de_Escopete_%28Guadalajara%29.svg.png"
        "\tEscudo d'armas",
        f"{PAGE}\t{UP}/a/aa/Iglesia_de_Nuestra_Se%C3%B1ora_de_la_Asunci%C3%B3n._Escopete_%28Guadalajara%29.jpg/"
        "250px-Iglesia_de_Nuestra_Se%C3%B1ora_de_la_Asunci%C3%B3n._Escopete_%28Guadalajara%29.jpg\t",
        f"{PAGE}\t{UP}/9/9a/Flag_of_Spain.svg/18px-Flag_of_Spain.svg.png\t",
        f"{PAGE}\t{UP}/d/d4/Bandera_Castilla-La_Mancha.svg/18px-Bandera_Castilla-La_Mancha.svg.png\t",
        f"{PAGE}\t{UP}/9/9c/Castilla-La_Mancha-loc.svg/250px-Castilla-La_Mancha-loc.svg.png"
        "\tEscopete ubicada en Castiella-La Mancha",
        f"{PAGE}\t{UP}/d/d2/Map_pointer.svg/12px-Map_pointer.svg.png\tEscopete",
        f"{PAGE}\thttps://login.wikimedia.org/wiki/Special:CentralAutoLogin/start?type=1x1\t",
        f"{PAGE}\t{STATIC}/footer/wikimedia-button.png\tWikimedia Foundation",
        f"{PAGE}\t{STATIC}/footer/poweredby_mediawiki_88x31.png\tPowered by MediaWiki",
        '#peer-stats\t{"file":"whirlwind.warc.gz","records":4,"pages":1,"html_pages":1,"references":13,'
        '"references_with_alt":7,"uri_fallbacks":0,"loop_guard":null,"task_failure":null,"elapsed_ms":107.315}',
        "",
    ]
)


def test_peer_output_is_read_with_its_escapes_and_counters() -> None:
    text = (
        "#page\thttp://example.org/a b\ttext/html\n"
        "http://example.org/a b\thttp://example.org/i.png\tline\\none\\ttab \\\\ back\u2028slash\n"
        "http://example.org/a b\thttp://example.org/j.png\t  \n"
        '#peer-stats\t{"html_pages": 1, "elapsed_ms": 250, "loop_guard": "stopped after 1000"}\n'
    )
    (side,) = parse_peer_output(text)
    assert side.page_uris == ["http://example.org/a b"]
    assert side.references == 2  # the blank alt is a reference, not an alt text
    assert side.alts == [("http://example.org/a b", "http://example.org/i.png", "line one tab \\ back slash")]
    assert side.pages == 1 and side.own_seconds == 0.25
    assert "loop forever" in side.notes[0]
    assert unescape("a\\tb\\\\n") == "a\tb\\n"
    with pytest.raises(ValueError, match="ends without"):
        parse_peer_output("http://p/\thttp://p/i.png\talt\n")


def test_texts_and_uris_are_compared_alike() -> None:
    assert normalise_text(" a\u00a0 b\x07\nc\u200b ") == "a b c"
    assert uri_key("http://x.org/a b") == uri_key("http://x.org/a%20b")


def test_both_peer_only_ours_only_and_the_explained_differences() -> None:
    page, other = "http://x.org/p?q=William%20Tell", "http://x.org/other"
    peer = [
        (page, "http://x.org/1.png", "same"),
        (page, "http://x.org/1.png", "same"),  # twice on the page: a multiset
        ("http://x.org/p?q=William%2520Tell", "http://x.org/2.png", "escaped twice"),  # jwarc's re-encoded "%"
        (other, "http://x.org/3.png", "e-brand QR\ufffd\ufffd\ufffd"),  # the peer read EUC-JP as UTF-8
        (other, "http://x.org/4.png", "peer alone"),
    ]
    ours = [
        (page, "http://x.org/1.png", "same"),
        (page, "http://x.org/2.png", "escaped twice"),
        (other, "http://x.org/3.png", "e-brand QRコード"),
        (other, "http://x.org/5.png", "ours alone"),
    ]
    by_page = compare(peer, ours, with_image=False)
    assert by_page.counts() == {"both": 1, "peer_only": 4, "ours_only": 3}
    pages, decoding = pair_leftovers(by_page.peer_only, by_page.ours_only)
    assert [(p[1], o[1]) for p, o in pages] == [("escaped twice", "escaped twice")]
    assert [(p[1], o[1]) for p, o in decoding] == [("e-brand QR\ufffd\ufffd\ufffd", "e-brand QRコード")]
    left = by_page.peer_only - collections.Counter(p for p, _ in pages + decoding)
    assert sorted(alt for _, alt in left.elements()) == ["peer alone", "same"]
    assert compare(peer, ours, with_image=True).counts()["both"] == 1


def test_ours_finds_every_alt_text_the_peer_finds_on_a_real_page() -> None:
    (peer,) = parse_peer_output(RECORDED)
    ours, result = run_ours(REAL)
    assert ours.error is None and result.read.html == 1 and ours.pages == 1
    figures = compare_file(REAL, peer, ours, examples=2)
    assert figures["by_page_alt"] == {
        "both": 7,
        "page_uri_differs": 0,
        "decoding_only": 0,
        "peer_only": 0,
        "ours_only": 0,
    }
    assert figures["by_page_image_alt"] == {"both": 7, "peer_only": 0, "ours_only": 0}
    assert figures["peer"]["alts"] == figures["ours"]["alts"] == 7
    assert len(figures["examples"]["both"]) == 2


def test_a_whole_run_against_a_stand_in_peer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recorded = tmp_path / "recorded.txt"
    hidden = "\n".join(line for line in RECORDED.split("\n") if not line.endswith("\tWikimedia Foundation"))
    recorded.write_text(hidden, encoding="utf-8")
    stand_in = tmp_path / "peer.py"
    stand_in.write_text(f"import sys\nsys.stdout.write(open({str(recorded)!r}, encoding='utf-8').read())\n")
    report = tmp_path / "report.json"
    command = shlex.join([sys.executable, str(stand_in)])
    assert main(["--peer", command, str(REAL), "--json", str(report)]) == 0
    out = capsys.readouterr().out
    assert "| whirlwind.warc.gz |" in out and "## Time (same run, side by side)" in out
    figures = json.loads(report.read_text(encoding="utf-8"))
    (file,) = figures["files"]
    assert file["by_page_alt"]["ours_only"] == 1  # the line hidden from the stand-in: "Wikimedia Foundation"
    assert file["ours_only"][0]["alt"] == "Wikimedia Foundation"
    assert file["ours_only"][0]["cause"] == "page read by both; alt missing in the peer's (other)"
    assert file["peer"]["seconds"] > 0 and file["peer"]["own_seconds"] == pytest.approx(0.107315)
    assert figures["totals"]["ours"]["alts"] == 7


def test_without_a_peer_ours_is_reported_alone(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(REAL)]) == 0
    out = capsys.readouterr().out
    assert "The peer was not given" in out and "| whirlwind.warc.gz | 0.02 | 1 | 7 |" in out
