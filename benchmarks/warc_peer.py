"""Alt texts from real WARC files: the thesis authors' own extractor (the peer) against ours, in one run.

The peer is the authors' ``WarcImageExtractionMapper`` (jwarc + jsoup, every page decoded as UTF-8) run
outside Hadoop by a driver that is not part of this repository; ``--peer`` gives the command that starts
it, and the file's path is appended. One process is started per file; it must print, per HTML page it
parsed, ``#page TAB page-uri TAB content-type``, per image reference ``page-uri TAB image-uri TAB alt``
(alt empty when none; ``\\``, tab, CR and LF escaped as ``\\\\ \\t \\r \\n``) and, last, ``#peer-stats TAB
{json}`` with at least ``html_pages`` and ``elapsed_ms`` (its own time, JVM start excluded).

Ours is :func:`builder.extract.web.iter_web_rows` (images indexed without facts, as the peer keeps no
facts either); its alt texts are the rows of kind ``alt``. Both sides' texts are compared after the
same normalisation (control characters dropped, whitespace collapsed, ends stripped), as multisets
keyed by (page, image, alt) and by (page, alt), URIs compared percent-decoded and re-encoded the
same way. A peer-only text that ours holds under the same page written differently (jwarc encodes a
target URI's "%" again and strips WARC 1.0's ``<…>``) is counted apart, and so is one that ours holds on
the same page differing only in non-ASCII characters: a decoding difference (the peer reads every page
as UTF-8; ours honours charsets).
Each remaining peer-only text gets a cause, found by an untimed second look at the file (our reader's
pages and skips, and the records' HTTP headers as warcio reads them). Usage::

    python benchmarks/warc_peer.py --peer "java -cp CLASSPATH PeerDriver" FILE... [--json out.json]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import io
import json
import re
import shlex
import subprocess
import sys
import time
import traceback
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from builder.extract.html import HtmlStats, Undecodable, decode_page  # noqa: E402
from builder.extract.web import WebResult, WebTask, iter_web_rows  # noqa: E402
from builder.sources.warc import HTML_TYPES, WarcStats, iter_responses  # noqa: E402

Triple = tuple[str, str, str]  # page key, image key, normalised alt
URI_SAFE = "/:?#[]@!$&'()*+,;=-._~"
STATS_PREFIX = "#peer-stats\t"
PAGE_PREFIX = "#page\t"
_ESCAPES = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


# ---------------------------------------------------------------------------------------------- keys


def normalise_text(text: str) -> str:
    """The same text on both sides: control and format characters dropped, whitespace collapsed, ends trimmed."""
    if not text.isprintable():
        text = "".join(char for char in text if char.isprintable() or char.isspace())
    return " ".join(text.split())


def uri_key(uri: str) -> str:
    """A URI as both sides are compared: jwarc percent-encodes what ours keeps raw, so decode then re-encode."""
    return quote(unquote(uri.strip()), safe=URI_SAFE)


def loose_page_key(page: str) -> str:
    """A page URI with WARC 1.0's angle brackets, escaping and case ignored: pairs a text whose page URI one side
    writes differently (jwarc strips the brackets)."""
    for _ in range(3):  # jwarc 0.12 percent-encodes a target URI's "%" again: William%20Tell → William%2520Tell
        page = unquote(page)
    return page.strip().strip("<>").strip().lower()


def skeleton(text: str) -> str:
    """A text's ASCII characters: two texts alike but for non-ASCII ones differ only in how bytes were decoded."""
    return " ".join(_NON_ASCII.sub(" ", text.replace("\ufffd", " ")).split())


def unescape(field: str) -> str:
    """Undo the peer's escaping of backslash, tab, CR and LF."""
    if "\\" not in field:
        return field
    out = []
    chars = iter(field)
    for char in chars:
        if char == "\\":
            following = next(chars, "")
            out.append(_ESCAPES.get(following, "\\" + following))
        else:
            out.append(char)
    return "".join(out)


# ---------------------------------------------------------------------------------------------- sides


@dataclasses.dataclass
class Side:
    """What one extractor read and found in one file, and how long it took."""

    pages: int = 0  # HTML pages parsed
    page_uris: list[str] = dataclasses.field(default_factory=list)
    references: int = 0  # image references (any caption)
    alts: list[Triple] = dataclasses.field(default_factory=list)  # raw page and image URIs, normalised alt
    seconds: float | None = None  # the peer's whole process; ours in-process
    own_seconds: float | None = None  # the peer's own elapsed time (JVM start excluded)
    error: str | None = None
    raised: str | None = None  # ours: the exception our extraction raised
    notes: list[str] = dataclasses.field(default_factory=list)
    stats: dict[str, Any] = dataclasses.field(default_factory=dict)


def parse_peer_output(text: str) -> list[Side]:
    """The peer's output, one :class:`Side` per ``#peer-stats`` line (lines split on LF only: an alt may hold
    U+2028 and the like)."""
    sides: list[Side] = []
    side = Side()
    for line in text.split("\n"):
        line = line.rstrip("\r")
        if not line:
            continue
        if line.startswith(STATS_PREFIX):
            side.stats = json.loads(line[len(STATS_PREFIX) :])
            side.pages = int(side.stats.get("html_pages", len(side.page_uris)))
            if side.stats.get("elapsed_ms") is not None:
                side.own_seconds = float(side.stats["elapsed_ms"]) / 1000
            if side.stats.get("task_failure"):
                side.notes.append(f"peer: map() would fail the Hadoop task ({side.stats['task_failure']})")
            if side.stats.get("loop_guard"):
                side.notes.append(f"peer: map() would loop forever; the driver {side.stats['loop_guard'][:120]}")
            sides.append(side)
            side = Side()
        elif line.startswith(PAGE_PREFIX):
            side.page_uris.append(unescape(line[len(PAGE_PREFIX) :].split("\t")[0]))
        elif not line.startswith("#"):
            fields = line.split("\t")
            if len(fields) != 3:
                raise ValueError(f"peer output line is not page TAB image TAB alt: {line[:200]!r}")
            page, image, alt = (unescape(field) for field in fields)
            side.references += 1
            alt = normalise_text(alt)
            if alt:
                side.alts.append((page, image, alt))
    if side.references or side.page_uris:
        raise ValueError("peer output ends without its #peer-stats line")
    return sides


def run_peer(command: Sequence[str], path: Path, timeout: float) -> Side:
    """One peer process on one file; its whole wall time and its own."""
    started = time.perf_counter()
    try:
        done = subprocess.run([*command, str(path)], capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return Side(seconds=time.perf_counter() - started, error=f"no answer within {timeout:g} s")
    seconds = time.perf_counter() - started
    stderr = done.stderr.decode("utf-8", "replace")
    try:
        sides = parse_peer_output(done.stdout.decode("utf-8", "replace"))
    except ValueError as error:
        sides, problem = [], str(error)
    else:
        problem = None
    if len(sides) != 1:
        tail = stderr.strip().splitlines()[-1:] or [""]
        side = Side(error=problem or f"exit {done.returncode}, {len(sides)} stats lines; {tail[0][:200]}")
    else:
        side = sides[0]
    side.seconds = seconds
    unparsed = stderr.count("Can't parse document")
    if unparsed:
        side.notes.append(f"peer: jsoup could not parse {unparsed} page(s)")
    return side


def run_ours(path: Path) -> tuple[Side, WebResult]:
    """Our extraction of one file, timed in-process (imports excluded); an exception is reported, not raised."""
    result = WebResult(WarcStats(), HtmlStats())
    side = Side()
    started = time.perf_counter()
    try:
        for kind, row in iter_web_rows(WebTask(str(path), "", "", inspect=None), result):
            if kind != "reference":
                continue
            if row["kind"] == "alt":
                side.alts.append((row["page"], row["image"], normalise_text(row["caption"])))
    except Exception as error:  # noqa: BLE001 - our side failing on a real file is a finding to report
        where = traceback.extract_tb(error.__traceback__)[-1]
        side.raised = side.error = (
            f"raised {type(error).__name__}: {error} ({Path(where.filename).name}:{where.lineno})"
        )
    side.seconds = time.perf_counter() - started
    side.pages = result.html.pages
    side.references = result.references
    side.stats = {"read": dataclasses.asdict(result.read), "html": dataclasses.asdict(result.html)}
    if result.error:
        side.error = result.error
    if result.read.files_stopped:
        stopped = [problem for problem in result.read.problems if "reading stopped" in problem]
        side.notes.append("ours: " + (stopped[0].split(": ", 1)[-1] if stopped else "reading stopped")[:160])
    return side, result


# ---------------------------------------------------------------------------------------------- comparison


@dataclasses.dataclass
class Comparison:
    """Both sides' alt texts as multisets: found by both, by the peer only, by ours only."""

    both: collections.Counter[Any]
    peer_only: collections.Counter[Any]
    ours_only: collections.Counter[Any]

    def counts(self) -> dict[str, int]:
        return {
            "both": sum(self.both.values()),
            "peer_only": sum(self.peer_only.values()),
            "ours_only": sum(self.ours_only.values()),
        }


def compare(peer: Iterable[Triple], ours: Iterable[Triple], with_image: bool) -> Comparison:
    """Multiset comparison keyed by (page, image, alt) or (page, alt), URIs as :func:`uri_key` gives them."""

    def key(triple: Triple) -> tuple[str, ...]:
        page, image, alt = triple
        return (uri_key(page), uri_key(image), alt) if with_image else (uri_key(page), alt)

    left = collections.Counter(key(triple) for triple in peer)
    right = collections.Counter(key(triple) for triple in ours)
    return Comparison(left & right, left - right, right - left)


def pair_leftovers(
    peer_only: collections.Counter[Any], ours_only: collections.Counter[Any]
) -> tuple[list[tuple[Any, Any]], list[tuple[Any, Any]]]:
    """Peer-only (page, alt) keys that ours has in another form, one to one: the same alt under a page URI
    written differently, then the same page with a text differing only in non-ASCII characters (decoding)."""
    peer_left, ours_left = collections.Counter(peer_only), collections.Counter(ours_only)

    def take(match: Any) -> list[tuple[Any, Any]]:
        index: dict[Any, list[Any]] = collections.defaultdict(list)
        for key, count in ours_left.items():
            if match(key) is not None:
                index[match(key)].extend([key] * count)
        pairs = []
        for key in sorted(peer_left.elements()):
            candidates = index.get(match(key)) if match(key) is not None else None
            while candidates and ours_left[candidates[-1]] <= 0:
                candidates.pop()
            if candidates:
                other = candidates.pop()
                pairs.append((key, other))
                ours_left[other] -= 1
                peer_left[key] -= 1
        return pairs

    pages = take(lambda key: (loose_page_key(key[0]), key[1]))
    decoding = take(lambda key: (key[0], skeleton(key[1])) if _NON_ASCII.search(key[1]) else None)
    return pages, decoding


# ---------------------------------------------------------------------------------------------- diagnosis


@dataclasses.dataclass
class Record:
    """A response record's facts as warcio reads it: a neutral third reader of the same file."""

    record_id: str
    content_type: str
    content_encoding: str
    transfer_encoding: str


def record_facts(path: Path) -> tuple[dict[str, Record], str | None]:
    """Every response record's HTTP headers by page key (warcio, ARC converted); what stopped warcio, if anything."""
    from warcio.archiveiterator import ArchiveIterator

    facts: dict[str, Record] = {}
    try:
        with open(path, "rb") as stream, contextlib.redirect_stderr(io.StringIO()):  # warcio's warnings
            for record in ArchiveIterator(stream, arc2warc=True):
                if record.rec_type != "response" or record.http_headers is None:
                    continue
                uri = record.rec_headers.get_header("WARC-Target-URI") or ""
                headers = record.http_headers
                facts.setdefault(
                    loose_page_key(uri),
                    Record(
                        record.rec_headers.get_header("WARC-Record-ID") or "",
                        headers.get_header("Content-Type") or "",
                        headers.get_header("Content-Encoding") or "",
                        headers.get_header("Transfer-Encoding") or "",
                    ),
                )
    except Exception as error:  # noqa: BLE001 - a damaged file: keep what was read
        return facts, f"{type(error).__name__}: {error}"
    return facts, None


@dataclasses.dataclass
class OurPages:
    """Which pages our reader handed on and how each was decoded (an untimed second pass)."""

    decoded: dict[str, str] = dataclasses.field(default_factory=dict)  # loose page key → how it was decoded
    uris: dict[str, str] = dataclasses.field(default_factory=dict)  # loose page key → the page URI ours uses
    read: WarcStats = dataclasses.field(default_factory=WarcStats)
    undecodable: set[str] = dataclasses.field(default_factory=set)
    problems: list[str] = dataclasses.field(default_factory=list)


def our_pages(path: Path) -> OurPages:
    pages = OurPages()
    stats = pages.read
    try:
        for response in iter_responses(str(path), stats):
            if response.kind != "html":
                continue
            html = HtmlStats()
            try:
                decode_page(response.payload, response.charset, html)
            except Undecodable:
                pages.undecodable.add(loose_page_key(response.uri))
                continue
            how = next(
                (name for name in ("bom", "header", "meta", "detected") if getattr(html, f"charset_{name}")), "?"
            )
            label = f" {response.charset}" if how == "header" else ""
            pages.decoded.setdefault(loose_page_key(response.uri), f"{how}{label}")
            pages.uris.setdefault(loose_page_key(response.uri), response.uri)
    except Exception as error:  # noqa: BLE001 - reported as our reader's problem
        pages.problems.append(f"{type(error).__name__}: {error}")
    pages.problems.extend(stats.problems)
    return pages


def is_arc(path: Path) -> bool:
    """Whether a file is an ARC file (which our reader, for WARC files, does not read)."""
    import gzip

    with open(path, "rb") as stream:
        head = stream.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    try:
        with opener(path, "rb") as stream:
            start = stream.read(64)
    except OSError:
        return False
    return not start.lstrip().startswith(b"WARC/") and b"://" in start.split(b"\n")[0]


def peer_only_cause(page: str, image: str, alt: str, context: dict[str, Any]) -> str:
    """Why ours lacks a text the peer found, as far as the file tells."""
    key = loose_page_key(page)
    ours: OurPages = context["ours"]
    record: Record | None = context["records"].get(key)
    encodings = ""
    if record is not None:
        encodings = ", ".join(
            f"{name}: {value}"
            for name, value in (
                ("Content-Encoding", record.content_encoding),
                ("Transfer-Encoding", record.transfer_encoding),
            )
            if value
        )
    if key not in ours.decoded:
        if context["error"]:
            return f"our side {context['error'][:140]}"
        if key in ours.undecodable:
            return "page undecodable by us" + (f" ({encodings})" if encodings else "")
        arc = "ARC file: " if context["arc"] else ""
        if record is not None:
            noted = [p for p in ours.problems if record.record_id and record.record_id in p and "stopped" not in p]
            if noted:
                return arc + "our reader skipped the record: " + _problem_kind(noted[0])
            media = record.content_type.split(";")[0].strip().lower()
            if media not in HTML_TYPES:
                return (
                    arc + f"HTTP Content-Type {media!r} is not HTML to us (the peer takes any type matching .*html.*)"
                )
            if ours.read.other_types:
                return arc + (
                    f"HTTP Content-Type {media!r} (as warcio reads it), yet our reader counted the record among "
                    f"other_types ({ours.read.other_types} in the file): its HTTP headers not read as such"
                )
        stopped = [p for p in ours.problems if "reading stopped" in p]
        if stopped:
            return arc + "our reader stopped before the page: " + _problem_kind(stopped[0])
        return arc + "page not handed on by our reader (cause unknown)" + (f" ({encodings})" if encodings else "")
    if ours.uris.get(key, "").startswith("<"):
        return "our page URI keeps WARC 1.0's angle brackets <…>: the image URLs resolve to no http(s) URL"
    if "\ufffd" in alt:
        return "the peer's UTF-8 decoding gave U+FFFD (ours decodes with " + ours.decoded[key] + ")"
    if encodings:
        return f"page read by both; ours parses the payload as stored ({encodings})"
    scheme = image.partition(":")[0].lower()
    if scheme not in {"http", "https"}:
        return f"image URL scheme {scheme!r}: ours keeps http(s) images only"
    return "page read by both; alt missing in ours (other)"


def ours_only_cause(page: str, image: str, alt: str, context: dict[str, Any]) -> str:
    """Why the peer lacks a text ours found, as far as its rules and counters tell."""
    key = loose_page_key(page)
    peer: Side = context["peer"]
    if peer.error:
        return f"the peer failed ({peer.error[:100]})"
    if key not in context["peer_pages"]:
        length = len(quote(unquote(page.strip("<>")), safe=URI_SAFE))
        if length <= 11 or length > 2000:
            return "page URI length outside the peer's 12..2000"
        return "page not read by the peer"
    if len(image) <= 20 or len(image) > 2000:
        return "image URL length outside the peer's 21..2000"
    return "page read by both; alt missing in the peer's (other)"


def _problem_kind(problem: str) -> str:
    """A reader's problem without the file and record that start it."""
    text = problem.split(": record ", 1)[-1]
    text = re.sub(r"^<urn:[^>]*> at byte [\d,]+: ", "", text)
    text = re.sub(r"^.*?reading stopped after ", "reading stopped after ", text)
    text = re.sub(r"record <urn:[^>]*> at byte [\d,]+", "a record", text)
    return text[:160]


# ---------------------------------------------------------------------------------------------- one file


def compare_file(path: Path, peer: Side | None, ours: Side, examples: int) -> dict[str, Any]:
    """Every figure of one file, with examples and a cause for each text only one side found."""
    size = path.stat().st_size
    figures: dict[str, Any] = {"file": path.name, "bytes": size, "ours": _side_figures(ours, size)}
    if peer is None:
        return figures
    figures["peer"] = _side_figures(peer, size)
    with_image = compare(peer.alts, ours.alts, with_image=True)
    by_page = compare(peer.alts, ours.alts, with_image=False)
    page_pairs, decoding_pairs = pair_leftovers(by_page.peer_only, by_page.ours_only)
    figures["by_page_image_alt"] = with_image.counts()
    raw_peer = {uri_key(page): page for page, _, _ in peer.alts}  # keys back to the URIs each side wrote
    raw_ours = {uri_key(page): page for page, _, _ in ours.alts}
    figures["decoding_examples"] = [
        {"page": raw_peer[p[0]], "peer": p[1], "ours": o[1]} for p, o in decoding_pairs[:examples]
    ]
    figures["page_uri_examples"] = [
        {"peer": raw_peer[p[0]], "ours": raw_ours[o[0]], "alt": p[1]} for p, o in page_pairs[:examples]
    ]

    explained_peer = collections.Counter(p for p, _ in page_pairs + decoding_pairs)
    explained_ours = collections.Counter(o for _, o in page_pairs + decoding_pairs)
    peer_left = by_page.peer_only - explained_peer
    ours_left = by_page.ours_only - explained_ours
    context = {
        "ours": our_pages(path),
        "records": record_facts(path)[0],
        "arc": is_arc(path),
        "error": ours.raised,
        "peer": peer,
        "peer_pages": {loose_page_key(page) for page in peer.page_uris},
    }
    figures["peer_only"] = _listed(peer.alts, peer_left, context, peer_only_cause)
    figures["ours_only"] = _listed(ours.alts, ours_left, context, ours_only_cause)
    figures["by_page_alt"] = {
        "both": sum(by_page.both.values()),
        "page_uri_differs": len(page_pairs),
        "decoding_only": len(decoding_pairs),
        "peer_only": len(figures["peer_only"]),
        "ours_only": len(figures["ours_only"]),
    }
    figures["examples"] = {
        "both": [{"page": raw_peer[k[0]], "alt": k[1]} for k in list(by_page.both)[:examples]],
        "peer_only": figures["peer_only"][:examples],
        "ours_only": figures["ours_only"][:examples],
    }
    return figures


def _side_figures(side: Side, size: int) -> dict[str, Any]:
    own = side.own_seconds if side.own_seconds is not None else side.seconds
    return {
        "pages": side.pages,
        "references": side.references,
        "alts": len(side.alts),
        "seconds": side.seconds,
        "own_seconds": side.own_seconds,
        "pages_per_s": side.pages / own if own else None,
        "mb_per_s": size / 1e6 / own if own else None,
        "error": side.error,
        "notes": side.notes,
        "stats": side.stats,
    }


def _listed(triples: list[Triple], left: collections.Counter[Any], context: dict[str, Any], cause: Any) -> list[dict]:
    """The triples whose (page, alt) key is left over, each once per leftover count, with its cause."""
    remaining = collections.Counter(left)
    listed = []
    for page, image, alt in triples:
        key = (uri_key(page), alt)
        if remaining[key] > 0:
            remaining[key] -= 1
            listed.append({"page": page, "image": image, "alt": alt, "cause": cause(page, image, alt, context)})
    return listed


# ---------------------------------------------------------------------------------------------- report


def _rate(value: float | None, digits: int = 0) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def totals(files: list[dict[str, Any]]) -> dict[str, Any]:
    """The sums over all files, and the rates of the summed pages, bytes and times."""
    total: dict[str, Any] = {"files": len(files), "bytes": sum(f["bytes"] for f in files)}
    for side in ("peer", "ours"):
        present = [f[side] for f in files if side in f]
        if not present:
            continue
        seconds = sum(s["seconds"] or 0 for s in present)
        own = sum((s["own_seconds"] if s["own_seconds"] is not None else s["seconds"]) or 0 for s in present)
        pages = sum(s["pages"] for s in present)
        total[side] = {
            "pages": pages,
            "references": sum(s["references"] for s in present),
            "alts": sum(s["alts"] for s in present),
            "seconds": seconds,
            "own_seconds": own,
            "pages_per_s": pages / own if own else None,
            "mb_per_s": total["bytes"] / 1e6 / own if own else None,
        }
    for key in ("by_page_alt", "by_page_image_alt"):
        present = [f[key] for f in files if key in f]
        if present:
            total[key] = {name: sum(counts[name] for counts in present) for name in present[0]}
    return total


def markdown(report: dict[str, Any], examples: int, listed: int) -> str:
    """The report as markdown: counts, timings, examples, and the peer-only texts by cause."""
    files, total, peer_given = report["files"], report["totals"], report["peer_command"] is not None
    lines = ["# Alt texts of real WARC files: the authors' extractor (peer) and ours", ""]
    if peer_given:
        lines.append(f"Peer: `{report['peer_command']}`, one process per file. Ours: `iter_web_rows`, in-process.")
    else:
        lines.append("**The peer was not given** (`--peer`): ours alone.")
    lines += [
        "Alt texts: non-empty after normalisation (control characters dropped, whitespace collapsed); "
        "both / peer only / ours only as multisets keyed by (page, alt) and by (page, image, alt).",
        "",
    ]
    if peer_given:
        lines += [
            "| file | MB | pages peer | pages ours | alts peer | alts ours | both | page URI differs | decoding only "
            "| peer only | ours only | both (+image) | peer only (+image) | ours only (+image) | notes |",
            "|" + "---|" * 15,
        ]
        for f in files + [{"file": "**total**", **total}]:
            peer, ours = f.get("peer"), f["ours"]
            page, triple = f.get("by_page_alt", {}), f.get("by_page_image_alt", {})
            notes = "; ".join(
                ([f"peer error: {peer['error']}"] if peer and peer.get("error") else [])
                + (peer.get("notes", []) if peer else [])
                + ([f"ours: {ours['error']}"] if ours.get("error") else [])
                + ours.get("notes", [])
            ).replace("|", "\\|")
            counts = " | ".join(
                str(page.get(name, "–"))
                for name in ("both", "page_uri_differs", "decoding_only", "peer_only", "ours_only")
            )
            lines.append(
                f"| {f['file']} | {f['bytes'] / 1e6:.2f} | {peer['pages'] if peer else '–'} | {ours['pages']} "
                f"| {peer['alts'] if peer else '–'} | {ours['alts']} | {counts} | {triple.get('both', '–')} "
                f"| {triple.get('peer_only', '–')} | {triple.get('ours_only', '–')} | {notes} |"
            )
        lines += [
            "",
            "Columns by (page, alt): *both* alike; *page URI differs*: the same text under a page URI one side writes "
            "differently (brackets, escaping); *decoding only*: the same page's text differing only in non-ASCII "
            "characters; *peer only* / *ours only*: the rest, each with a cause below. (+image): keyed by "
            "(page, image, alt), exact.",
        ]
        lines += [
            "",
            "## Time (same run, side by side)",
            "",
            "| file | MB | peer JVM process s | peer own s | ours s | pages/s peer | pages/s ours "
            "| MB/s peer | MB/s ours |",
            "|" + "---|" * 9,
        ]
        for f in files + [{"file": "**total**", **total}]:
            peer, ours = f.get("peer"), f["ours"]
            lines.append(
                f"| {f['file']} | {f['bytes'] / 1e6:.2f} | {_seconds(peer and peer['seconds'])} "
                f"| {_seconds(peer and peer['own_seconds'])} | {_seconds(ours['seconds'])} "
                f"| {_rate(peer and peer['pages_per_s'])} | {_rate(ours['pages_per_s'])} "
                f"| {_rate(peer and peer['mb_per_s'], 2)} | {_rate(ours['mb_per_s'], 2)} |"
            )
        lines += ["", "Rates: each side's own pages over its own time (the peer's without JVM start)."]
    else:
        lines += ["| file | MB | pages | alts | s | pages/s | MB/s | notes |", "|" + "---|" * 8]
        for f in files + [{"file": "**total**", **total}]:
            ours = f["ours"]
            notes = "; ".join(([f"error: {ours['error']}"] if ours.get("error") else []) + ours.get("notes", []))
            lines.append(
                f"| {f['file']} | {f['bytes'] / 1e6:.2f} | {ours['pages']} | {ours['alts']} "
                f"| {_seconds(ours['seconds'])} | {_rate(ours['pages_per_s'])} | {_rate(ours['mb_per_s'], 2)} "
                f"| {notes.replace('|', chr(92) + '|')} |"
            )
        return "\n".join(lines) + "\n"

    lines += ["", f"## Examples (at most {examples} of each)", ""]
    for f in files:
        sample = f.get("examples", {})
        if not any(sample.values()) and not f.get("decoding_examples"):
            continue
        lines.append(f"### {f['file']}")
        for name in ("both", "peer_only", "ours_only"):
            for item in sample.get(name, []):
                image = f" — {item['image']}" if "image" in item else ""
                lines.append(f"- {name.replace('_', ' ')}: {item['page']}{image} — “{item['alt']}”")
        for item in f.get("decoding_examples", []):
            lines.append(f"- decoding only: {item['page']} — peer “{item['peer']}” / ours “{item['ours']}”")
        for item in f.get("page_uri_examples", []):
            lines.append(f"- page URI differs: peer {item['peer']} / ours {item['ours']} — “{item['alt']}”")
        lines.append("")

    for side, title in (
        ("peer_only", "Alt texts the peer finds and we do not"),
        ("ours_only", "Alt texts only ours finds"),
    ):
        causes: dict[str, list[tuple[str, dict]]] = collections.defaultdict(list)
        for f in files:
            for item in f.get(side, []):
                causes[item["cause"]].append((f["file"], item))
        lines += [f"## {title}, by cause", ""]
        if not causes:
            lines += ["None.", ""]
        for cause, items in sorted(causes.items(), key=lambda entry: -len(entry[1])):
            per_file = collections.Counter(name for name, _ in items)
            lines.append(f"### {cause}: {len(items)}  ({', '.join(f'{n}: {c}' for n, c in per_file.items())})")
            for name, item in items[:listed]:
                lines.append(f"- {name} | {item['page']} | {item['image']} | “{item['alt']}”")
            if len(items) > listed:
                lines.append(f"- … {len(items) - listed} more (all in --json)")
            lines.append("")
    return "\n".join(lines) + "\n"


def run(paths: list[Path], peer_command: list[str] | None, repeat: int, timeout: float, examples: int) -> dict:
    """Both sides on every file, alternating, best of ``repeat`` for the times; the figures as one report."""
    files = []
    for path in paths:
        peer_runs = [run_peer(peer_command, path, timeout) for _ in range(repeat)] if peer_command else []
        our_runs = [run_ours(path)[0] for _ in range(repeat)]
        peer = peer_runs[-1] if peer_runs else None
        if peer is not None:
            peer.seconds = min(r.seconds for r in peer_runs if r.seconds is not None)
            owns = [r.own_seconds for r in peer_runs if r.own_seconds is not None]
            peer.own_seconds = min(owns) if owns else None
        ours = our_runs[-1]
        ours.seconds = min(r.seconds for r in our_runs if r.seconds is not None)
        files.append(compare_file(path, peer, ours, examples))
    return {
        "peer_command": shlex.join(peer_command) if peer_command else None,
        "repeat": repeat,
        "files": files,
        "totals": totals(files),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "The peer command is split like a shell line and the file's path appended, one process per file; "
            "its output protocol is described at the top of benchmarks/warc_peer.py. Example: --peer "
            '"java -cp /path/to/peer/classes:/usr/share/java/jsoup.jar PeerDriver"'
        ),
    )
    parser.add_argument("files", nargs="+", type=Path, help="WARC (or ARC) files, read where they are")
    parser.add_argument("--peer", help="command that runs the authors' extractor on one file (default: ours alone)")
    parser.add_argument("--peer-classpath", help="instead of --peer: the Java classpath of the peer …")
    parser.add_argument("--peer-main", default="PeerDriver", help="… and its main class (default PeerDriver)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per side and file; the fastest time counts")
    parser.add_argument("--timeout", type=float, default=600, help="seconds the peer may take per file")
    parser.add_argument("--examples", type=int, default=3, help="examples per kind and file in the markdown")
    parser.add_argument("--list", type=int, default=25, help="texts listed per cause in the markdown")
    parser.add_argument("--json", type=Path, help="write every figure, and every text only one side found, here")
    options = parser.parse_args(argv)
    if options.peer and options.peer_classpath:
        parser.error("give --peer or --peer-classpath, not both")
    command = shlex.split(options.peer) if options.peer else None
    if options.peer_classpath:
        command = ["java", "-cp", options.peer_classpath, options.peer_main]
    missing = [str(path) for path in options.files if not path.is_file()]
    if missing:
        parser.error(f"no such file: {', '.join(missing)}")
    report = run(options.files, command, max(1, options.repeat), options.timeout, options.examples)
    print(markdown(report, options.examples, options.list), end="")
    if options.json:
        options.json.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
