"""``wikipedia_ipc.py download``: a dump run fetched from a mirror on 127.0.0.1, resumed, verified, built from."""

from __future__ import annotations

import bz2
import contextlib
import errno
import hashlib
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import wikipedia_ipc
from builder.common import FolderLock
from builder.config import GOLD
from builder.engines.local import build
from builder.publish.card import SAMPLE_DUMP
from builder.sources.download import MANIFEST, PARTIAL, PARTIAL_MARKER, _partial_folder, manifest_dumps
from builder.sources.multistream import index_path
from builder.sources.xml import iter_pages

WIKI = "enwiki"
DATE = "20240101"
DUMP = f"{WIKI}-{DATE}-pages-articles-multistream1.xml-p1p47.bz2"
INDEX = f"{WIKI}-{DATE}-pages-articles-multistream-index1.txt-p1p47.bz2"
JOB = "articlesmultistreamdump"
# every test's network waits are short: a read may take 5 s, retries wait 0.05 s, 0.1 s, …
FAST = ["--timeout", "5", "--retry-wait", "0.05", "--retries", "3"]


def sample_index() -> bytes:
    """The multistream index of the sample: one bz2 stream at byte 0, so every page is at offset 0."""
    lines = [f"0:{page.page_id}:{page.title}\n" for page in iter_pages(SAMPLE_DUMP)]
    return bz2.compress("".join(lines).encode("utf-8"))


def status_of(files: dict[str, bytes], state: str = "done", date: str = DATE) -> bytes:
    """A ``dumpstatus.json`` of Wikimedia's shape, listing ``files`` under the multistream job."""
    listed = {
        name: {
            "size": len(data),
            "url": f"/{WIKI}/{date}/{name}",
            "md5": hashlib.md5(data).hexdigest(),
            "sha1": hashlib.sha1(data).hexdigest(),
        }
        for name, data in files.items()
    }
    jobs = {
        JOB: {"status": state, "updated": f"{date[:4]}-{date[4:6]}-{date[6:]} 08:37:17", "files": listed},
        "metahistorybz2dump": {"status": "waiting", "updated": "", "files": {}},
        "metahistory7zdump": {"status": "waiting", "updated": "", "files": {}},
    }
    return json.dumps({"jobs": jobs, "version": "0.8"}).encode()


class Mirror:
    """A dump mirror on 127.0.0.1: files by URL path, ``Range`` requests, and faults injected on demand."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.requests: list[tuple[str, str | None]] = []
        self.drop_after: dict[str, int] = {}  # path → bytes sent before the connection is cut, once
        self.corrupt: dict[str, int] = {}  # path → how many more times it is served with one byte changed
        self.unavailable: dict[str, int] = {}  # path → how many more times it is answered with 503
        self.raw: dict[str, Callable[[BaseHTTPRequestHandler], None]] = {}  # path → writes its own answer
        mirror = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                mirror.requests.append((self.path, self.headers.get("Range")))
                if self.path in mirror.raw:
                    with contextlib.suppress(OSError):  # the client hung up: what a hostile mirror is made for
                        mirror.raw[self.path](self)
                    return
                body = mirror.files.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                if mirror.unavailable.get(self.path, 0) > 0:
                    mirror.unavailable[self.path] -= 1
                    self.send_error(503)
                    return
                if mirror.corrupt.get(self.path, 0) > 0:
                    mirror.corrupt[self.path] -= 1
                    body = body[:100] + bytes([body[100] ^ 0xFF]) + body[101:]
                start = 0
                requested = self.headers.get("Range", "")
                if requested.startswith("bytes=") and requested.endswith("-"):
                    start = int(requested[len("bytes=") : -1])
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                else:
                    self.send_response(200)
                self.send_header("Content-Length", str(len(body) - start))
                self.end_headers()
                cut = mirror.drop_after.pop(self.path, None)
                self.wfile.write(body[start:] if cut is None else body[start : start + cut])

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def gets(self, name: str) -> list[str | None]:
        """The ``Range`` header of every request for a file of the run (``None``: the whole file)."""
        return [headers for path, headers in self.requests if path == f"/{WIKI}/{DATE}/{name}"]


@pytest.fixture
def mirror() -> Iterator[Mirror]:
    run = {DUMP: SAMPLE_DUMP.read_bytes(), INDEX: sample_index()}
    files = {f"/{WIKI}/{DATE}/{name}": data for name, data in run.items()}
    files[f"/{WIKI}/{DATE}/dumpstatus.json"] = status_of(run)
    server = Mirror(files)
    server.thread.start()
    yield server
    server.server.shutdown()
    server.server.server_close()
    server.thread.join(timeout=10)


def download(mirror: Mirror, folder: Path, *options: str) -> int:
    return wikipedia_ipc.main(
        ["download", WIKI, "--date", DATE, "--mirror", mirror.url, "--output", str(folder), *FAST, *options]
    )


def parquet_names(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.glob("*.parquet"))


def test_index_path_of_a_single_file_and_of_a_part(tmp_path: Path) -> None:
    small = tmp_path / "dewikivoyage-20240101-pages-articles-multistream.xml.bz2"
    part = tmp_path / DUMP
    assert index_path(small) is None and index_path(part) is None  # no index beside them yet
    (tmp_path / "dewikivoyage-20240101-pages-articles-multistream-index.txt.bz2").touch()
    (tmp_path / INDEX).touch()
    assert index_path(small) == tmp_path / "dewikivoyage-20240101-pages-articles-multistream-index.txt.bz2"
    assert index_path(part) == tmp_path / INDEX
    assert index_path(tmp_path / INDEX) is None  # an index has no index
    assert index_path(tmp_path / "enwiki-20240101-pages-meta-history1.xml-p1p812.bz2") is None


def test_download_verifies_and_build_reads_the_folder(
    mirror: Mirror, tmp_path: Path, capsys: pytest.CaptureFixture[str], perceptron_available: None
) -> None:
    folder = tmp_path / "dumps"
    assert download(mirror, folder, "--quiet") == 0
    printed = capsys.readouterr().out
    size = len(SAMPLE_DUMP.read_bytes()) + len(sample_index())
    assert f"enwiki 20240101 {JOB}: 2 files, {size / 1000:.1f} kB ({size:,} bytes) from {mirror.url}" in printed
    assert "Verified the SHA-1 of 2 files" in printed
    assert (folder / DUMP).read_bytes() == SAMPLE_DUMP.read_bytes()
    assert sorted(path.name for path in folder.iterdir()) == sorted([DUMP, INDEX, MANIFEST])
    record = json.loads((folder / MANIFEST).read_text())
    assert (record["wiki"], record["date"], record["kind"], record["job"], record["mirror"]) == (
        WIKI,
        DATE,
        "articles",
        JOB,
        mirror.url,
    )
    assert [(entry["name"], entry["role"], entry["sha1"]) for entry in record["files"]] == [
        (DUMP, "dump", hashlib.sha1(SAMPLE_DUMP.read_bytes()).hexdigest()),
        (INDEX, "index", hashlib.sha1(sample_index()).hexdigest()),
    ]
    assert manifest_dumps(folder) == ([folder / DUMP], record)
    assert index_path(folder / DUMP) == folder / INDEX  # the build cuts the dump by its index

    out = tmp_path / "built"
    args = ["build", str(folder), "--configs", "gold", "--output", str(out), "--tagger", "perceptron", "--quiet"]
    assert wikipedia_ipc.main([*args, "--workers", "1"]) == 0
    direct = tmp_path / "direct"
    build([SAMPLE_DUMP], [GOLD], direct, tagger="perceptron", show_progress=False)
    assert parquet_names(out / "gold") == parquet_names(direct / "gold")  # byte-identical: names hash the content
    assert sum(pq.read_metadata(path).num_rows for path in (out / "gold").glob("*.parquet")) > 0
    card = (out / "README.md").read_text(encoding="utf-8")  # the card names where the dump came from
    verified = record["files"][0]["verified"]
    assert (
        f"  - `{DUMP}` (enwiki, dump date 20240101, kind: articles): downloaded from {mirror.url} "
        f"({WIKI} dump run {DATE}), SHA-1 `{record['files'][0]['sha1']}` verified {verified}\n"
    ) in card
    assert "downloaded from" not in (direct / "README.md").read_text(encoding="utf-8")

    assert download(mirror, folder) == 0  # a second run checks what is there and fetches nothing
    assert f"{DUMP}: already complete (SHA-1 matches), skipped" in capsys.readouterr().err
    assert mirror.gets(DUMP) == [None]


def test_the_datasets_builder_reads_a_download_folder(
    mirror: Mirror, tmp_path: Path, perceptron_available: None
) -> None:
    folder = tmp_path / "dumps"
    assert download(mirror, folder, "--quiet") == 0
    builder = wikipedia_ipc.WikipediaIPC(
        config_name="gold", dump_paths=[str(folder)], tagger="perceptron", cache_dir=str(tmp_path / "cache")
    )
    builder.download_and_prepare()
    direct = tmp_path / "direct"
    build([SAMPLE_DUMP], [GOLD], direct, tagger="perceptron", show_progress=False)
    expected = pq.read_table(sorted((direct / "gold").glob("*.parquet"))).column("id").to_pylist()
    assert sorted(key for split in builder.as_dataset().values() for key in split["id"]) == sorted(expected)


def test_build_refuses_a_download_folder_with_a_file_missing(
    mirror: Mirror, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "dumps"
    assert download(mirror, folder, "--quiet") == 0
    (folder / INDEX).unlink()
    code = wikipedia_ipc.main(["build", str(folder), "--output", str(tmp_path / "out"), "--quiet"])
    assert code == 2
    assert capsys.readouterr().err == f"error: {folder / INDEX}: listed in {folder / MANIFEST} but missing; " + (
        "run download again\n"
    )
    assert not (tmp_path / "out").exists()


def test_an_interrupted_download_resumes_with_range(
    mirror: Mirror, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mirror.drop_after[f"/{WIKI}/{DATE}/{DUMP}"] = 3000
    folder = tmp_path / "dumps"
    assert download(mirror, folder, "--parallel", "1") == 0
    assert mirror.gets(DUMP) == [None, "bytes=3000-"]
    assert (folder / DUMP).read_bytes() == SAMPLE_DUMP.read_bytes()
    err = capsys.readouterr().err
    assert f"{DUMP} from {mirror.url}/{WIKI}/{DATE}/{DUMP}: the connection closed 3,548 bytes before the end" in err
    assert "\r" not in err  # stderr is no terminal: lines, not a redrawn bar

    (folder / DUMP).unlink()  # a .part left by a run that was stopped is resumed too
    partials = _partial_folder(folder)
    (partials / f"{DUMP}.part").write_bytes(SAMPLE_DUMP.read_bytes()[:2000])
    assert download(mirror, folder, "--quiet") == 0
    assert mirror.gets(DUMP)[2:] == ["bytes=2000-"]
    assert (folder / DUMP).read_bytes() == SAMPLE_DUMP.read_bytes()
    assert not partials.exists()  # emptied, so removed


def test_a_5xx_answer_is_tried_again_a_bounded_number_of_times(
    mirror: Mirror, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = f"/{WIKI}/{DATE}/dumpstatus.json"
    mirror.unavailable[status] = 2
    mirror.unavailable[f"/{WIKI}/{DATE}/{DUMP}"] = 1
    assert download(mirror, tmp_path / "dumps", "--quiet") == 0
    assert [path for path, _ in mirror.requests].count(status) == 3
    assert mirror.gets(DUMP) == [None, None]
    assert (tmp_path / "dumps" / DUMP).read_bytes() == SAMPLE_DUMP.read_bytes()
    assert f"{DUMP} from {mirror.url}/{WIKI}/{DATE}/{DUMP}: HTTP 503 Service Unavailable; trying again in 0.05 s" in (
        capsys.readouterr().err
    )

    mirror.unavailable[status] = 10
    started = time.monotonic()
    assert download(mirror, tmp_path / "again", "--quiet") == 2
    assert time.monotonic() - started < 3  # 4 tries, waiting 0.05 + 0.1 + 0.2 s between them
    assert capsys.readouterr().err == (
        f"error: {mirror.url}{status}: HTTP 503 Service Unavailable (gave up after 4 attempts)\n"
    )
    assert mirror.unavailable[status] == 6


def test_a_corrupt_file_is_fetched_again_once_then_refused(
    mirror: Mirror, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = f"/{WIKI}/{DATE}/{DUMP}"
    good = SAMPLE_DUMP.read_bytes()
    bad = hashlib.sha1(good[:100] + bytes([good[100] ^ 0xFF]) + good[101:]).hexdigest()
    folder = tmp_path / "dumps"
    mirror.corrupt[path] = 2
    assert download(mirror, folder, "--quiet") == 2
    err = capsys.readouterr().err
    assert f"{DUMP}: SHA-1 {bad}, not {hashlib.sha1(good).hexdigest()}; downloading it again from scratch" in err
    assert f"error: {DUMP}: downloaded twice from {mirror.url}{path}, and twice it did not verify: SHA-1 {bad}" in err
    assert mirror.gets(DUMP) == [None, None]  # the second time from scratch, not resumed
    assert sorted(path.name for path in folder.iterdir()) == [INDEX]  # no final name, no .part, no manifest

    mirror.corrupt[path] = 1  # corrupt once: the second download verifies
    assert download(mirror, folder, "--quiet") == 0
    assert (folder / DUMP).read_bytes() == good


def test_a_file_of_someone_else_under_the_final_name_is_left_alone(
    mirror: Mirror, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "dumps"
    folder.mkdir()
    (folder / DUMP).write_bytes(b"my own notes\n")
    assert download(mirror, folder, "--quiet") == 2
    assert f"{folder / DUMP}: already there with 13 bytes" in capsys.readouterr().err
    assert (folder / DUMP).read_bytes() == b"my own notes\n"
    assert not (folder / MANIFEST).exists()


def test_a_disk_error_names_the_folder_and_keeps_the_part(
    mirror: Mirror, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    replace = os.replace

    def disk_full(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
        if str(source).endswith(".part"):  # the move of a verified file to its final name
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        replace(source, target)

    monkeypatch.setattr(os, "replace", disk_full)
    folder = tmp_path / "dumps"
    assert download(mirror, folder, "--quiet") == 2
    assert f"error: {folder}: cannot write {DUMP} (No space left on device)\n" in capsys.readouterr().err
    assert [path.name for path in folder.iterdir()] == [PARTIAL]
    assert sorted(path.name for path in (folder / PARTIAL).iterdir()) == sorted(
        [f"{DUMP}.part", f"{INDEX}.part", PARTIAL_MARKER]
    )


def test_a_job_still_running_or_a_missing_run_is_refused(
    mirror: Mirror, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mirror.files[f"/{WIKI}/{DATE}/dumpstatus.json"] = status_of({}, state="in-progress")
    assert download(mirror, tmp_path / "dumps") == 2
    assert capsys.readouterr().err == (
        f"error: {mirror.url}/{WIKI}/{DATE}/dumpstatus.json: job {JOB} is in-progress, not done; "
        "try another --date, or latest\n"
    )
    assert not (tmp_path / "dumps").exists()
    assert wikipedia_ipc.main(["download", WIKI, "--date", "20230101", "--mirror", mirror.url, *FAST]) == 2
    assert capsys.readouterr().err == (
        f"error: {mirror.url}/{WIKI}/20230101/dumpstatus.json: not found: the mirror has no run 20230101 of enwiki; "
        "--date latest picks one\n"
    )


def test_latest_picks_the_newest_run_that_is_done(
    mirror: Mirror, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    links = "".join(f'<a href="{date}/">{date}/</a>\n' for date in ("20231201", DATE, "20240201", "20240301"))
    mirror.files[f"/{WIKI}/"] = f'<html><body><a href="../">../</a>\n{links}<a href="latest/">latest/</a>'.encode()
    mirror.files[f"/{WIKI}/20240301/dumpstatus.json"] = status_of({}, state="in-progress", date="20240301")
    mirror.files[f"/{WIKI}/20231201/dumpstatus.json"] = status_of({}, date="20231201")
    # 20240201 has no dumpstatus.json at all (404)
    monkeypatch.chdir(tmp_path)
    assert wikipedia_ipc.main(["download", WIKI, "--mirror", mirror.url, "--quiet", *FAST]) == 0
    assert f"Latest complete run of enwiki ({JOB}): {DATE}" in capsys.readouterr().out
    assert json.loads((tmp_path / "dumps" / f"{WIKI}-{DATE}" / MANIFEST).read_text())["date"] == DATE
    assert not any(path.startswith(f"/{WIKI}/20231201/") for path, _ in mirror.requests)  # older runs not asked


def test_offline_is_one_clear_line_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as probe:  # a port that nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    code = wikipedia_ipc.main(
        ["download", WIKI, "--mirror", f"http://127.0.0.1:{port}", "--output", str(tmp_path / "d"), "--retry-wait", "5"]
    )
    assert time.monotonic() - started < 3  # a refused connection is not retried
    assert code == 2
    assert capsys.readouterr().err == (
        f"error: http://127.0.0.1:{port}/{WIKI}/: connection refused; is this machine offline, or the mirror down?\n"
    )
    assert not (tmp_path / "d").exists()


def test_a_file_name_outside_the_folder_is_refused(
    mirror: Mirror, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mirror.files[f"/{WIKI}/{DATE}/dumpstatus.json"] = status_of({"../../evil.bz2": b"x"})
    assert download(mirror, tmp_path / "dumps") == 2
    assert "lists a file name that is not a plain name: '../../evil.bz2'" in capsys.readouterr().err
    assert not (tmp_path / "dumps").exists() and not (tmp_path / "evil.bz2").exists()


def test_parallel_is_capped_with_the_reason(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit:
        wikipedia_ipc.main(["download", WIKI, "--parallel", "8"])
    assert exit.value.code == 2
    assert "'8': 1 to 3 files at a time; Wikimedia's dump servers allow each address only a few connections" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["en/wiki"], "'en/wiki' is not a wiki's database name such as enwiki or dewiki"),
        ([WIKI, "--date", "2024-01-01"], "--date '2024-01-01': expected YYYYMMDD (e.g. 20240101) or latest"),
        ([WIKI, "--mirror", "dumps.wikimedia.org"], "--mirror 'dumps.wikimedia.org': expected an http:// or https://"),
        ([WIKI, "--format", "7z"], "--kind articles --format 7z: not published; 7z is only for --kind history"),
    ],
)
def test_a_bad_argument_is_one_line_before_any_request(
    options: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # a request would reach a closed port and be refused: the message shows that none was made
    assert wikipedia_ipc.main(["download", "--mirror", "http://127.0.0.1:9", *options]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {message}") and err.count("\n") == 1


def test_two_downloads_into_one_folder(mirror: Mirror, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The folder is locked while a download writes into it: a second one stops with a clear line."""
    folder = tmp_path / "dumps"
    folder.mkdir()
    with FolderLock(folder):  # what a running download holds
        assert download(mirror, folder, "--quiet") == 2
    assert "another download is writing into this folder" in capsys.readouterr().err
    assert list(folder.iterdir()) == []
    assert download(mirror, folder, "--quiet") == 0


# A hostile mirror: every test below failed before the download was hardened against it, and each is
# bounded in time and bytes (the servers stop on their own, long after a correct client has).

RUN = f"/{WIKI}/{DATE}"


def serve_one_file(mirror: Mirror, data: bytes, name: str = DUMP) -> None:
    """The run lists one file, ``data`` (its size and SHA-1); the tests then decide how it is served."""
    mirror.files[f"{RUN}/dumpstatus.json"] = status_of({name: data})


def endless(sent: list[int], limit: int = 64 * 10**6) -> Callable[[BaseHTTPRequestHandler], None]:
    """A 200 answer with no Content-Length and a body that goes on (until ``limit``, so that the test ends)."""

    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.end_headers()
        block = b"x" * 65536
        while sent[0] < limit:
            handler.wfile.write(block)
            sent[0] += len(block)

    return answer


def test_no_more_bytes_are_read_than_the_stated_size(
    mirror: Mirror, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = b"x" * 1000
    serve_one_file(mirror, data)
    sent = [0]
    mirror.raw[f"{RUN}/{DUMP}"] = endless(sent)
    folder = tmp_path / "dumps"
    started = time.monotonic()
    assert download(mirror, folder, "--quiet") == 2
    assert time.monotonic() - started < 10
    err = capsys.readouterr().err
    assert err == (
        f"error: {DUMP}: {mirror.url}{RUN}/{DUMP} sends more than the 1,000 bytes dumpstatus.json states: a wrong "
        "file, refused and not kept\n"
    )
    assert mirror.gets(DUMP) == [None]  # refused at once, not fetched again
    assert sent[0] < 16 * 10**6  # what the sockets' buffers took before the client hung up, not the 64 MB
    assert list(folder.iterdir()) == []  # no .part, no final name, no manifest

    announced = tmp_path / "announced"  # a Content-Length longer than stated: refused before the body is read
    mirror.raw.pop(f"{RUN}/{DUMP}")
    mirror.files[f"{RUN}/{DUMP}"] = data + b"more"
    assert download(mirror, announced, "--quiet") == 2
    assert "sends more than the 1,000 bytes dumpstatus.json states" in capsys.readouterr().err
    assert list(announced.iterdir()) == []


def test_a_status_file_that_never_ends_is_refused(
    mirror: Mirror, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sent = [0]
    mirror.raw[f"{RUN}/dumpstatus.json"] = endless(sent, limit=200 * 10**6)
    assert download(mirror, tmp_path / "dumps", "--quiet") == 2
    assert capsys.readouterr().err == (
        f"error: {mirror.url}{RUN}/dumpstatus.json: more than 32.0 MB; a dump run's status file or listing is far "
        "smaller: is --mirror a dump mirror?\n"
    )
    assert sent[0] < 64 * 10**6
    assert not (tmp_path / "dumps").exists()


def trickle(header: bytes, body: bytes, every: float, stop: float = 30.0) -> Callable[[BaseHTTPRequestHandler], None]:
    """Send ``header`` at once, then ``body`` a byte at a time, one every ``every`` seconds (for ``stop`` s at most)."""

    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.wfile.write(header)
        handler.wfile.flush()
        started = time.monotonic()
        for byte in body:
            if time.monotonic() - started > stop:
                return
            time.sleep(every)
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()

    return answer


def test_a_mirror_that_trickles_its_body_ends_the_attempt(
    mirror: Mirror, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Headers, then a byte every 0.2 s: each read returns, so a read timeout never fires; the rate does."""
    data = b"y" * 1000
    serve_one_file(mirror, data)
    header = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
    mirror.raw[f"{RUN}/{DUMP}"] = trickle(header, data, every=0.2)
    folder = tmp_path / "dumps"
    started = time.monotonic()
    code = wikipedia_ipc.main(
        ["download", WIKI, "--date", DATE, "--mirror", mirror.url, "--output", str(folder), "--quiet"]
        + ["--timeout", "1", "--retries", "0"]
    )
    assert code == 2
    assert time.monotonic() - started < 5  # one attempt of 1 s, where the old reader waited 200 s
    err = capsys.readouterr().err
    assert err.startswith(f"error: {DUMP} from {mirror.url}{RUN}/{DUMP}: stalled: ")
    assert "bytes in 1 s, below the minimum rate of 10.0 kB/s (--min-rate) (gave up after 1 attempt)" in err
    assert [path.name for path in (folder / PARTIAL).iterdir()] != []  # the bytes in are kept to resume from

    mirror.raw.pop(f"{RUN}/{DUMP}")  # the next run resumes where the stalled one stopped
    mirror.files[f"{RUN}/{DUMP}"] = data
    assert download(mirror, folder, "--quiet") == 0
    assert mirror.gets(DUMP)[-1] not in (None, "bytes=0-")
    assert (folder / DUMP).read_bytes() == data and not (folder / PARTIAL).exists()


def test_a_mirror_that_trickles_its_headers_ends_the_attempt(
    mirror: Mirror, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    serve_one_file(mirror, b"z" * 100)
    headers = b"Content-Length: 100\r\nX-Slow: " + b"s" * 200 + b"\r\n\r\n"
    mirror.raw[f"{RUN}/{DUMP}"] = trickle(b"HTTP/1.1 200 OK\r\n", headers, every=0.2)
    started = time.monotonic()
    code = wikipedia_ipc.main(
        ["download", WIKI, "--date", DATE, "--mirror", mirror.url, "--output", str(tmp_path / "d"), "--quiet"]
        + ["--timeout", "1", "--retries", "1", "--retry-wait", "0.05"]
    )
    assert code == 2
    assert time.monotonic() - started < 6  # two attempts of 1 s each
    assert capsys.readouterr().err.splitlines() == [
        f"{DUMP} from {mirror.url}{RUN}/{DUMP}: no answer within 1 s; trying again in 0.05 s",
        f"error: {DUMP} from {mirror.url}{RUN}/{DUMP}: no answer within 1 s (gave up after 2 attempts)",
    ]
    assert len(mirror.gets(DUMP)) == 2


@pytest.mark.parametrize(("name", "what"), [(MANIFEST, "download record"), (f"{DUMP}.part", "partial downloads")])
def test_a_listed_name_of_the_toolkits_own_files_is_refused(
    name: str, what: str, mirror: Mirror, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mirror.files[f"{RUN}/dumpstatus.json"] = status_of({DUMP: SAMPLE_DUMP.read_bytes(), name: b"{}"})
    mirror.files[f"{RUN}/{name}"] = b"{}"
    assert download(mirror, tmp_path / "dumps", "--quiet") == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {mirror.url}{RUN}/dumpstatus.json: job {JOB} lists a file named {name!r}, ")
    assert f"the name of the toolkit's own {what}" in err and err.count("\n") == 1
    assert mirror.gets(DUMP) == [] and not (tmp_path / "dumps").exists()


def test_a_users_download_json_is_left_alone(
    mirror: Mirror, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "dumps"
    folder.mkdir()
    (folder / MANIFEST).write_text('{"my": "notes"}\n')
    assert download(mirror, folder, "--quiet") == 2
    assert capsys.readouterr().err == (
        f"error: {folder / MANIFEST}: not a download record this toolkit wrote; it is left as it is: move it "
        "away, or download into another --output\n"
    )
    assert (folder / MANIFEST).read_text() == '{"my": "notes"}\n'
    assert sorted(path.name for path in folder.iterdir()) == [MANIFEST] and mirror.gets(DUMP) == []

    (folder / MANIFEST).unlink()  # the toolkit's own record of another run: refused as well
    assert download(mirror, folder, "--quiet") == 0
    record = json.loads((folder / MANIFEST).read_text())
    (folder / MANIFEST).write_text(json.dumps({**record, "date": "20231201"}))
    assert download(mirror, folder, "--quiet") == 2
    assert f"records the download of enwiki 20231201 {JOB}, not enwiki {DATE} {JOB}" in capsys.readouterr().err


def test_a_users_part_file_is_left_alone(mirror: Mirror, tmp_path: Path) -> None:
    """Before, a user's NAME.part was taken for a partial download: resumed, refused, deleted."""
    folder = tmp_path / "dumps"
    folder.mkdir()
    mine = b"my draft, not a partial download\n"
    (folder / f"{DUMP}.part").write_bytes(mine)
    assert download(mirror, folder, "--quiet") == 0
    assert (folder / f"{DUMP}.part").read_bytes() == mine
    assert (folder / DUMP).read_bytes() == SAMPLE_DUMP.read_bytes()
    assert mirror.gets(DUMP) == [None]  # fetched whole: the user's bytes were not resumed from


def test_a_partial_folder_the_toolkit_did_not_write_is_left_alone(
    mirror: Mirror, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "dumps"
    (folder / PARTIAL).mkdir(parents=True)
    (folder / PARTIAL / f"{DUMP}.part").write_bytes(b"someone else's")
    assert download(mirror, folder, "--quiet") == 2
    assert f"error: {folder / PARTIAL}: not a folder of partial downloads this toolkit wrote" in (
        capsys.readouterr().err
    )
    assert (folder / PARTIAL / f"{DUMP}.part").read_bytes() == b"someone else's"


@pytest.mark.parametrize(
    ("jobs", "message"),
    [
        (
            {JOB: {"status": "done", "files": {"a\u0000b.bz2": {"size": 1, "url": "/x", "sha1": "0" * 40}}}},
            f"job {JOB} lists a file name that is not a plain name: 'a\\x00b.bz2'",
        ),
        (
            {JOB: {"status": "done", "files": {DUMP: {"size": True, "url": "/x", "sha1": "0" * 40}}}},
            f"{DUMP} has the size true, not a number of bytes",
        ),
        (
            {JOB: "done"},
            f'jobs.{JOB} is "done", not an object with a status and files; is this a dump run\'s dumpstatus.json?',
        ),
        ({JOB: {"status": "done", "files": {DUMP: "big"}}}, f'{DUMP} is "big", not an object with size, url and sha1'),
    ],
)
def test_a_malformed_status_file_is_one_clear_line(
    jobs: dict[str, object], message: str, mirror: Mirror, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mirror.files[f"{RUN}/dumpstatus.json"] = json.dumps({"jobs": jobs}).encode()
    assert download(mirror, tmp_path / "dumps", "--quiet") == 2
    assert capsys.readouterr().err == f"error: {mirror.url}{RUN}/dumpstatus.json: {message}\n"
    assert not (tmp_path / "dumps").exists()


@pytest.mark.parametrize("option", [["--timeout", "0"], ["--timeout", "inf"], ["--min-rate", "-1"]])
def test_limits_that_would_not_bound_a_transfer_are_refused(
    option: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert wikipedia_ipc.main(["download", WIKI, "--mirror", "http://127.0.0.1:9", *option]) == 2
    assert capsys.readouterr().err.startswith("error: --timeout must be a positive number")
