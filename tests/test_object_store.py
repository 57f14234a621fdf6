"""Object stores: crawls read from a bucket by the workers themselves, and the output folder published into a
bucket with the local folder's promise (old build or new, never a mix; finished after a kill at any step), all
against an S3-compatible server on 127.0.0.1 (moto's, a process of its own)."""

from __future__ import annotations

import bz2
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import datasets
import pytest
from test_output import NEW_CAPTIONS, OLD_CAPTIONS, snapshot
from test_output import dumps as dumps  # the fixture: the sample captions dump, then a newer one

import builder.publish.bucket
from builder.common import OutputError
from builder.config import GOLD, REFERENCES, SILVER, WEB
from builder.engines.local import build
from builder.publish.bucket import LOCK_OBJECT, BucketPublisher, card_data_files
from builder.publish.publisher import STAGING_PREFIX
from builder.sources.kinds import input_kind
from builder.sources.warc import expand_warc_inputs

DATA = Path(__file__).parent / "data"


def bucket_snapshot(fs, url: str) -> dict[str, bytes]:  # noqa: ANN001 - an s3fs.S3FileSystem
    """Every visible object under the folder with its bytes (hidden ones, staging and lock, left out)."""
    fs.invalidate_cache()
    root = url.removeprefix("s3://").rstrip("/")
    found = fs.find(root) if fs.exists(root) else []
    relative = [path[len(root) + 1 :] for path in found]
    return {name: fs.cat_file(f"{root}/{name}") for name in sorted(relative) if not name.startswith(".")}


def hidden(fs, url: str) -> list[str]:  # noqa: ANN001
    fs.invalidate_cache()
    root = url.removeprefix("s3://").rstrip("/")
    return sorted(path[len(root) + 1 :] for path in fs.find(root) if path[len(root) + 1 :].startswith("."))


def loaded_sentences(url: str, config: str, cache: Path) -> set[str]:
    """What a reader following the card loads: every split of the config, through ``datasets``."""
    loaded = datasets.load_dataset("parquet", data_files=card_data_files(url, config), cache_dir=str(cache))
    rows = [row for split in loaded.values() for row in split]
    return {row["sentence1"] for row in rows} | {row["sentence2"] for row in rows}


def test_a_build_into_a_bucket_is_the_local_folder_byte_for_byte(
    s3_server, dumps: tuple[Path, Path], tmp_path: Path, perceptron_available: None
) -> None:
    """Built, then rebuilt from a newer dump: the bucket holds the local folder's files, no staging, no lock, and
    a reader following the card loads the new build."""
    fs, url, local = s3_server.fs(), f"s3://{s3_server.bucket()}/wikipedia_ipc", tmp_path / "local"
    for dump in dumps:
        remote = build([dump], [GOLD, SILVER], url, tagger="perceptron", show_progress=False)
        build([dump], [GOLD, SILVER], local, tagger="perceptron", show_progress=False)
        assert remote.output == url and remote.build is not None
        assert bucket_snapshot(fs, url) == snapshot(local)
        assert hidden(fs, url) == []
    assert loaded_sentences(url, "silver", tmp_path / "cache") == set(NEW_CAPTIONS)


def test_a_second_build_into_a_bucket_folder_fails_at_once(s3_server, dumps: tuple[Path, Path]) -> None:
    fs, url = s3_server.fs(), f"s3://{s3_server.bucket()}/out"
    with BucketPublisher(url, ["gold"]):
        assert hidden(fs, url)[0] == LOCK_OBJECT
        with pytest.raises(
            OutputError, match=f"{url}: another build is writing into this folder .* process {os.getpid()}"
        ):
            build([dumps[0]], [GOLD], url, tagger="perceptron", show_progress=False)
    assert hidden(fs, url) == []  # the first one's lock and staging prefix are gone with it
    # the lock of a build killed on this host: taken over, said
    fs.pipe_file(
        url.removeprefix("s3://") + "/" + LOCK_OBJECT,
        json.dumps(
            {"wikipedia_ipc": {"host": os.uname().nodename, "pid": dead_pid(), "since": 0, "id": "killed"}}
        ).encode(),
    )
    with pytest.warns(UserWarning, match="took over the lock of a build that was killed on this host"):
        BucketPublisher(url, ["gold"]).open().close()
    assert hidden(fs, url) == []


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_a_foreign_bucket_folder_is_refused_then_kept_beside_the_build(
    s3_server, dumps: tuple[Path, Path], tmp_path: Path, perceptron_available: None
) -> None:
    fs, url = s3_server.fs(), f"s3://{s3_server.bucket()}/user"
    root = url.removeprefix("s3://")
    fs.pipe_file(f"{root}/README.md", b"my notes\n")
    fs.pipe_file(f"{root}/gold/my-precious-results.parquet", b"precious")
    with pytest.raises(OutputError, match=rf"{url}: not empty \(README.md, gold\) and not a Wikipedia-IPC build"):
        build([dumps[0]], [GOLD], url, tagger="perceptron", show_progress=False)
    assert bucket_snapshot(fs, url) == {"README.md": b"my notes\n", "gold/my-precious-results.parquet": b"precious"}
    build([dumps[0]], [GOLD], url, tagger="perceptron", show_progress=False, overwrite=True)
    files = bucket_snapshot(fs, url)
    assert files["README.md.orig"] == b"my notes\n" and files["gold/my-precious-results.parquet"] == b"precious"
    assert loaded_sentences(url, "gold", tmp_path / "cache") == set(OLD_CAPTIONS)


class Killed(BaseException):
    """Stands for a kill: raised through the build, it leaves the bucket as a kill would (the lock aside)."""


def every_object(fs, url: str) -> dict[str, bytes]:  # noqa: ANN001
    """Every object under the folder with its bytes, the staging prefix included (the lock object left out)."""
    fs.invalidate_cache()
    root = url.removeprefix("s3://").rstrip("/")
    relative = [path[len(root) + 1 :] for path in fs.find(root)]
    return {name: fs.cat_file(f"{root}/{name}") for name in sorted(relative) if name != LOCK_OBJECT}


def test_a_build_killed_at_any_step_of_its_switch_is_finished_by_the_next(
    s3_server, dumps: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, perceptron_available: None
) -> None:
    """The new build runs once; the bucket as its switch found it (old build, committed staging prefix) is replayed
    into a folder per step, and the switch stopped before each of its copies, uploads and deletions: a reader
    following the card sees the old build (card and funnels), no card (said so), or the new build, in that order;
    never a card beside another build's funnel.json. The next build's publisher ends with the uninterrupted
    build's files."""
    fs, bucket = s3_server.fs(), s3_server.bucket()
    url = f"s3://{bucket}/built"
    build([dumps[0]], [GOLD, SILVER], url, tagger="perceptron", show_progress=False)
    fs.pipe_file(f"{bucket}/built/notes.txt", b"keep me\n")
    before = bucket_snapshot(fs, url)
    committed: dict[str, bytes] = {}
    stagings: list[str] = []
    real_apply = builder.publish.bucket.apply_bucket

    def recorded(folder, staging: str) -> None:  # noqa: ANN001 - the bucket as the switch finds it, kept
        committed.update(every_object(fs, folder.url))
        stagings.append(staging)
        real_apply(folder, staging)

    monkeypatch.setattr(builder.publish.bucket, "apply_bucket", recorded)
    build([dumps[1]], [GOLD, SILVER], url, tagger="perceptron", show_progress=False)  # the one build of the new dump
    monkeypatch.setattr(builder.publish.bucket, "apply_bucket", real_apply)
    after = bucket_snapshot(fs, url)
    assert len(stagings) == 1 and f"{stagings[0]}/publish.json" in committed
    views = {"old": view(before), "new": view(after)}
    steps = {"done": 0, "kill_at": -1}

    def counted(real):  # noqa: ANN001, ANN202
        def step(self, *args, **kwargs):  # noqa: ANN001, ANN202
            if steps["done"] == steps["kill_at"]:
                raise Killed
            steps["done"] += 1
            return real(self, *args, **kwargs)

        return step

    for operation in ("put", "copy", "remove", "upload"):
        monkeypatch.setattr(
            builder.publish.bucket.BucketFolder,
            operation,
            counted(getattr(builder.publish.bucket.BucketFolder, operation)),
        )
    seen = []
    for kill_at in range(100):
        out = f"s3://{bucket}/killed-{kill_at}"
        for name, data in committed.items():
            fs.pipe_file(f"{bucket}/killed-{kill_at}/{name}", data)
        steps.update(done=0, kill_at=kill_at)
        try:
            builder.publish.bucket.apply_bucket(builder.publish.bucket.BucketFolder(out), stagings[0])
        except Killed:
            pass
        else:  # no step left to stop at: the switch has this many
            assert bucket_snapshot(fs, out) == after and hidden(fs, out) == []
            break
        files = bucket_snapshot(fs, out)
        if "README.md" in files:
            seen.append(next(name for name, listed in views.items() if view(files) == listed))
        else:  # between the old card's deletion and the new card: a reader is told, and reads nothing
            seen.append("none")
            with pytest.raises(OutputError, match="a build was stopped while it switched the folder to its files"):
                card_data_files(out, "gold")
        assert any(name.startswith(STAGING_PREFIX) for name in hidden(fs, out))  # what was left, hidden
        steps["kill_at"] = -1  # the next publisher's switch runs to its end
        finishing = "finished publishing a build interrupted while its files were copied in|the empty staging prefix"
        with pytest.warns(UserWarning, match=finishing):
            BucketPublisher(out, ["gold"]).open().close()
        assert bucket_snapshot(fs, out) == after and hidden(fs, out) == []
    new_parts = sum(name.endswith(".parquet") for name in after if name not in before)
    # each new part's copy and removal; the old card's deletion; each funnel's copy and removal, the card's; then
    # the old parts' deletions and the staging prefix's
    old = 2 * new_parts + 1
    assert seen == ["old"] * old + ["none"] * 5 + ["new"] * (len(seen) - old - 5), seen


def view(files: dict[str, bytes]) -> dict[str, bytes | None]:
    """What a reader of the card sees: the card, each config's funnel.json and the parquet files it names."""
    import yaml

    card = files["README.md"].decode()
    configs = yaml.safe_load(card.split("---")[1])["wikipedia_ipc"]["configs"]
    names = [f"{name}/{file}" for name, entry in configs.items() for file in [*entry["files"], "funnel.json"]]
    return {name: files.get(name) for name in ["README.md", *names]}


def test_a_build_killed_by_a_signal_leaves_a_bucket_the_next_build_finishes(
    s3_server, dumps: tuple[Path, Path], perceptron_available: None
) -> None:
    """A real SIGKILL in the middle of the switch: the lock of the dead build is taken over, the switch finished."""
    fs, url = s3_server.fs(), f"s3://{s3_server.bucket()}/out"
    build([dumps[0]], [GOLD, SILVER], url, tagger="perceptron", show_progress=False)
    code = f"""
import os, signal, sys
import builder.publish.bucket as bucket
from builder.config import GOLD, SILVER
from builder.engines.local import build
real = bucket.BucketFolder.copy
copies = []
def copy(self, *args):
    copies.append(args)
    if len(copies) == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(self, *args)
bucket.BucketFolder.copy = copy
build([{str(dumps[1])!r}], [GOLD, SILVER], {url!r}, tagger="perceptron", show_progress=False)
"""
    process = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=300, env=os.environ.copy())
    assert process.returncode == -signal.SIGKILL, process.stderr.decode()[-2000:]
    assert LOCK_OBJECT in hidden(fs, url)
    with pytest.warns(UserWarning, match="took over the lock"):
        build([dumps[1]], [GOLD], url, tagger="perceptron", show_progress=False)
    assert hidden(fs, url) == []
    assert set(card_data_files(url, "silver")) and set(card_data_files(url, "gold"))


def test_a_crawl_in_a_bucket_builds_as_the_local_files_do(
    s3_server, tmp_path: Path, perceptron_available: None, spark
) -> None:
    """Real WARC files read from the bucket by the workers themselves (local engine and Spark's executors), the
    output published into it: the local files' build, byte for byte."""
    from benchmarks.web_crawl import write_shared_images_crawl
    from builder.engines.spark import build_spark

    fs, bucket = s3_server.fs(), s3_server.bucket()
    shared = write_shared_images_crawl(tmp_path / "shared.warc.gz")
    files = sorted(
        [DATA / "web" / "aut-example.warc.gz", DATA / "web" / "wget-urls.warc.gz", shared], key=lambda p: p.name
    )
    for path in files:
        fs.put_file(str(path), f"{bucket}/crawl/{path.name}")
    remote = [f"s3://{bucket}/crawl/{path.name}" for path in files]
    configs = [replace(WEB, splits=()), REFERENCES]
    local = build([str(path) for path in files], configs, tmp_path / "local", tagger="perceptron", show_progress=False)
    assert local.rows["references"] > local.rows["web"] > 0  # every reference, and the pairs some give
    folder = f"s3://{bucket}/crawl/"  # a folder of the store gives its archives in name order, as a local one
    assert input_kind(folder) == "web" and expand_warc_inputs([folder]) == remote
    build([folder], configs, f"s3://{bucket}/local-engine", tagger="perceptron", show_progress=False)
    with workers_see_the_server(spark):
        build_spark(remote, configs[:1], f"s3://{bucket}/spark", tagger="perceptron", workers=2, spark=spark)
    expected = snapshot(tmp_path / "local")
    for out in ("local-engine", "spark"):  # Spark's executors build the web config (its references: the same path)
        files = bucket_snapshot(fs, f"s3://{bucket}/{out}")
        assert set(files) == {name for name in expected if out == "local-engine" or not name.startswith("references")}
        for name, data in files.items():  # the records name the crawl files where they were read
            if name.endswith("funnel.json"):
                assert json.loads(data)["funnel"] == json.loads(expected[name])["funnel"]
            elif name != "README.md":
                assert data == expected[name], name


@contextlib.contextmanager
def workers_see_the_server(spark) -> Iterator[None]:  # noqa: ANN001 - a SparkSession
    """The run's Spark session started before the server: its Python workers get the ``AWS_*`` variables as a
    cluster's executors get them (``spark.executorEnv.*``)."""
    environment = spark.sparkContext.environment
    given = {name: value for name, value in os.environ.items() if name.startswith("AWS_")}
    environment.update(given)
    try:
        yield
    finally:
        for name in given:
            environment.pop(name, None)


def multistream_copy(source: Path, folder: Path) -> tuple[Path, Path]:
    """The sample dump cut as Wikimedia cuts a multistream dump (one bz2 stream per page), with its index."""
    xml = bz2.decompress(source.read_bytes()).decode("utf-8")
    head, _, rest = xml.partition("  <page>")
    pages = ["  <page>" + page for page in rest.removesuffix("</mediawiki>\n").split("  <page>")]
    dump = folder / "enwiki-20240101-pages-articles-multistream.xml.bz2"
    index = folder / "enwiki-20240101-pages-articles-multistream-index.txt.bz2"
    streams, lines, offset = [], [], 0
    for number, part in enumerate([head, *pages, "</mediawiki>\n"]):
        packed = bz2.compress(part.encode("utf-8"))
        if 0 < number <= len(pages):
            title = re.search(r"<title>([^<]*)</title>", part).group(1)  # type: ignore[union-attr]
            lines.append(f"{offset}:{number}:{title}\n")
        streams.append(packed)
        offset += len(packed)
    dump.write_bytes(b"".join(streams))
    index.write_bytes(bz2.compress("".join(lines).encode("utf-8")))
    return dump, index


def test_dumps_in_a_bucket_build_as_the_local_files_do(
    s3_server, tmp_path: Path, perceptron_available: None, spark
) -> None:
    """Real dumps read from the bucket in byte ranges by the workers themselves: the gensim wheel's enwiki excerpt,
    the sample cut into streams with its multistream index, the sample history as plain XML cut inside pages; and
    on Spark's executors the multistream dump: every file the local copies give, byte for byte."""
    from test_real_excerpt import EXCERPT

    import wikipedia_ipc
    from builder.config import BRONZE
    from builder.engines.spark import build_spark
    from builder.sources.multistream import stream_offsets

    fs, bucket = s3_server.fs(), s3_server.bucket()
    multistream, index = multistream_copy(wikipedia_ipc.SAMPLE_DUMP, tmp_path)
    history = tmp_path / "enwiki-20240101-sample-pages-meta-history.xml"
    packed = wikipedia_ipc.SAMPLE_DUMP.with_name("enwiki-20240101-sample-pages-meta-history.xml.bz2")
    history.write_bytes(bz2.decompress(packed.read_bytes()))
    table = wikipedia_ipc.SAMPLE_DUMP.with_name("enwiki-20240101-sample-image.sql.gz")  # SHA-1 groups
    for path in (EXCERPT, multistream, index, history, table):
        fs.put_file(str(path), f"{bucket}/dumps/{path.name}")
    url = {path: f"s3://{bucket}/dumps/{path.name}" for path in (EXCERPT, multistream, history, table)}
    assert len(stream_offsets(url[multistream])) == len(stream_offsets(multistream)) > 10  # the index, read remotely
    merged = [replace(config, identities=("title", "redirect", "sha1")) for config in (GOLD, SILVER)]
    cases = [(EXCERPT, [GOLD, SILVER], []), (multistream, merged, [table]), (history, [BRONZE], [])]
    for number, (dump, configs, tables) in enumerate(cases):
        local = tmp_path / f"local-{number}"
        options = {"tagger": "perceptron", "workers": 2, "show_progress": False}
        build([dump], configs, local, image_tables=tables, **options)
        remote = f"s3://{bucket}/out-{number}"
        build([url[dump]], configs, remote, image_tables=[url[table] for table in tables], **options)
        assert bucket_snapshot(fs, remote) == snapshot(local), dump.name
    assert json.loads(snapshot(tmp_path / "local-1")["gold/funnel.json"])["identity"]["titles_merged_by_sha1"] > 0
    with workers_see_the_server(spark):
        spark_options = {"tagger": "perceptron", "workers": 2, "spark": spark, "image_tables": [url[table]]}
        build_spark([url[multistream]], merged, f"s3://{bucket}/spark", **spark_options)
    assert bucket_snapshot(fs, f"s3://{bucket}/spark") == snapshot(tmp_path / "local-1")


def test_an_image_caption_dataset_in_a_bucket_builds_as_the_local_folder_does(
    s3_server, tmp_path: Path, perceptron_available: None, spark
) -> None:
    """img2dataset's real output in its layouts and the caption TSV, read from the bucket (the folders walked,
    the shards and the TSV's parts read there by the workers): the local folder's rows, byte for byte; a bare
    build of the bucket folder is told a dataset."""
    from test_captions_build import REAL, REAL_TSV

    from builder.config import CAPTIONS
    from builder.engines.spark import build_spark

    fs, bucket = s3_server.fs(), s3_server.bucket()
    fs.put(str(REAL), f"{bucket}/captions", recursive=True)
    assert input_kind(f"s3://{bucket}/captions/img2dataset/files") == "dataset"
    configs = [replace(CAPTIONS, splits=())]
    options = {"tagger": "perceptron", "workers": 2, "show_progress": False}
    for layout in ("webdataset", "parquet", "files"):
        tsv = {} if layout == "files" else {"captions_tsv": str(REAL_TSV)}
        remote_tsv = {} if layout == "files" else {"captions_tsv": f"s3://{bucket}/captions/{REAL_TSV.name}"}
        local = build([REAL / "img2dataset" / layout], configs, tmp_path / layout, **options, **tsv)
        assert local.rows["captions"] > 0
        remote = f"s3://{bucket}/out-{layout}"
        build([f"s3://{bucket}/captions/img2dataset/{layout}"], configs, remote, **options, **remote_tsv)
        files, expected = bucket_snapshot(fs, remote), snapshot(tmp_path / layout)
        assert set(files) == set(expected)
        for name, data in files.items():  # the records name the folder where it was read
            if name.endswith("funnel.json"):
                assert json.loads(data)["funnel"] == json.loads(expected[name])["funnel"]
            elif name != "README.md":
                assert data == expected[name], (layout, name)
    with workers_see_the_server(spark):
        remote_tsv = {"captions_tsv": f"s3://{bucket}/captions/{REAL_TSV.name}"}
        build_spark(
            [f"s3://{bucket}/captions/img2dataset/parquet"],
            configs,
            f"s3://{bucket}/spark",
            spark=spark,
            tagger="perceptron",
            workers=2,
            **remote_tsv,
        )
    spark_files = bucket_snapshot(fs, f"s3://{bucket}/spark")
    local_files = bucket_snapshot(fs, f"s3://{bucket}/out-parquet")
    assert {name: data for name, data in spark_files.items() if name.endswith(".parquet")} == {
        name: data for name, data in local_files.items() if name.endswith(".parquet")
    }


def test_commands_of_local_folders_refuse_a_bucket_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    """Scoring and pushing read local folders: a bucket's URL is refused as such, not read as a missing local
    folder ``s3:/…``; a scored build is not written into a bucket either."""
    from metrics.cli import main as score
    from wikipedia_ipc import main

    for command, run in (
        (["score", "s3://bucket/wikipedia_ipc"], score),
        (["push", "s3://bucket/wikipedia_ipc", "me/wikipedia-ipc", "--dry-run"], main),
    ):
        with pytest.raises(SystemExit):
            run(command)
        assert "s3://bucket/wikipedia_ipc: this command reads and writes local files and folders" in (
            capsys.readouterr().err
        )
    assert main(["build", "--score", "minilm", "--output", "s3://bucket/scored", "--quiet"]) == 2
    assert "--score writes a local folder, and s3://bucket/scored is on an object store" in capsys.readouterr().err


def test_a_resumed_build_reads_an_object_rewritten_under_the_same_key_again(
    s3_server, tmp_path: Path, perceptron_available: None
) -> None:
    """``--resume`` keys each input on its identity (storage.identity: the URL, size, version id or ETag and
    modification time): a crawl rewritten under the same key is read again, as a dump or a TSV is; an unchanged one
    is reused. The resumed build is the fresh build of the new object, byte for byte."""
    from builder.storage import identity

    fs, bucket = s3_server.fs(), s3_server.bucket()
    url = f"s3://{bucket}/crawl/crawl.warc.gz"
    first, second = DATA / "web" / "aut-example.warc.gz", DATA / "web" / "wget-urls.warc.gz"
    configs = [replace(WEB, splits=()), REFERENCES]
    options = {"tagger": "perceptron", "show_progress": False, "work_dir": tmp_path / "work"}
    fs.put_file(str(first), url.removeprefix("s3://"))
    before = identity(url)
    old = build([url], configs, tmp_path / "old", **options)
    shards = sorted(path.name for path in (tmp_path / "work").rglob("web-references-*.parquet"))
    resumed = build([url], configs, tmp_path / "same", resume=True, **options)  # unchanged: its shard is reused
    assert sorted(path.name for path in (tmp_path / "work").rglob("web-references-*.parquet")) == shards
    assert snapshot(tmp_path / "same") == snapshot(tmp_path / "old")
    fs.put_file(str(second), url.removeprefix("s3://"))  # rewritten under the same key
    assert identity(url) != before
    resumed = build([url], configs, tmp_path / "resumed", resume=True, **options)
    local = tmp_path / "local" / "crawl.warc.gz"
    local.parent.mkdir()
    local.write_bytes(second.read_bytes())
    fresh = build([str(local)], configs, tmp_path / "fresh", tagger="perceptron", show_progress=False)
    assert resumed.rows == fresh.rows != old.rows
    assert (old.rows["references"], fresh.rows["references"]) == (21, 23)
    expected, files = snapshot(tmp_path / "fresh"), snapshot(tmp_path / "resumed")
    assert set(files) == set(expected)
    for name, data in files.items():  # the records name the crawl where it was read
        if name.endswith("funnel.json"):
            assert json.loads(data)["funnel"] == json.loads(expected[name])["funnel"]
        elif name != "README.md":
            assert data == expected[name], name


def test_every_input_kind_keys_its_work_on_the_object_identity(s3_server, tmp_path: Path) -> None:
    """A dataset shard and a caption TSV rewritten in a bucket (same size and bytes but one) get another key: their
    task files are new names, so ``--resume`` reads them again."""
    from test_captions_build import REAL, REAL_TSV

    from builder.extract.captiontsv import tsv_part_tasks
    from builder.extract.datasetrefs import dataset_tasks

    fs, bucket = s3_server.fs(), s3_server.bucket()
    fs.put(str(REAL / "img2dataset" / "webdataset"), f"{bucket}/shards", recursive=True)
    fs.put_file(str(REAL_TSV), f"{bucket}/captions.tsv")
    folder, tsv = f"s3://{bucket}/shards", f"s3://{bucket}/captions.tsv"
    tasks = dataset_tasks(folder, True, 8, tmp_path)
    parts = tsv_part_tasks(tsv, tmp_path, 1)
    shard = f"{bucket}/shards/{tasks[0].shard_name}"
    data = fs.cat_file(shard)
    fs.pipe_file(shard, data[:-1] + bytes([data[-1] ^ 1]))  # one byte changed: the same size
    text = fs.cat_file(f"{bucket}/captions.tsv")
    fs.pipe_file(f"{bucket}/captions.tsv", text[:-1] + bytes([text[-1] ^ 1]))
    again = dataset_tasks(folder, True, 8, tmp_path)
    assert again[0].samples != tasks[0].samples and again[1:] == tasks[1:]
    assert [part.path for part in tsv_part_tasks(tsv, tmp_path, 1)] != [part.path for part in parts]


def test_a_missing_bucket_folder_or_object_is_named_before_the_work(
    s3_server, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Each input kind on a store: the full URL and what is missing (the bucket, the folder, the object), one line
    before any work; an output in a bucket that does not exist likewise."""
    from wikipedia_ipc import main

    fs, bucket = s3_server.fs(), s3_server.bucket()
    fs.put_file(str(DATA / "web" / "wget-urls.warc.gz"), f"{bucket}/crawl/a.warc.gz")
    out = ["--output", str(tmp_path / "out"), "--quiet", "--tagger", "perceptron"]
    cases = [
        (
            [f"s3://{bucket}/crawl/nope/x.warc.gz", "--configs", "web"],
            f"s3://{bucket}/crawl/nope/x.warc.gz: no such WARC file or folder "
            f"(the folder s3://{bucket}/crawl/nope/ does not exist)",
        ),
        (
            [f"s3://{bucket}/crawl/x.warc.gz", "--configs", "web"],
            f"s3://{bucket}/crawl/x.warc.gz: no such WARC file or folder (no object 'x.warc.gz' in s3://{bucket}/crawl/)",
        ),
        (
            ["s3://no-such-bucket-45/crawl/x.warc.gz", "--configs", "web"],
            "s3://no-such-bucket-45/crawl/x.warc.gz: no such WARC file or folder "
            "(the bucket 'no-such-bucket-45' does not exist)",
        ),
        (
            [f"s3://{bucket}/nofolder/", "--configs", "web"],
            f"s3://{bucket}/nofolder/: no such WARC file or folder (the folder s3://{bucket}/nofolder/ does not exist)",
        ),
        (
            [f"s3://{bucket}/dumps/enwiki-20240101-pages-articles.xml.bz2"],
            f"dump file not found: s3://{bucket}/dumps/enwiki-20240101-pages-articles.xml.bz2 "
            f"(the folder s3://{bucket}/dumps/ does not exist)",
        ),
        (
            ["s3://no-such-bucket-45/enwiki-20240101-pages-articles.xml.bz2"],
            "dump file not found: s3://no-such-bucket-45/enwiki-20240101-pages-articles.xml.bz2 "
            "(the bucket 'no-such-bucket-45' does not exist)",
        ),
        (
            [f"s3://{bucket}/shards/", "--configs", "captions"],
            f"s3://{bucket}/shards/: no such img2dataset folder (the folder s3://{bucket}/shards/ does not exist)",
        ),
    ]
    for arguments, message in cases:
        assert main(["build", *arguments, *out]) == 2, arguments
        assert capsys.readouterr().err.strip().splitlines()[-1] == f"error: {message}"
    arguments = ["build", f"s3://{bucket}/crawl/a.warc.gz", "--configs", "web", "--quiet", "--tagger", "perceptron"]
    assert main([*arguments, "--output", "s3://no-such-bucket-45/out"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "error: s3://no-such-bucket-45/out: cannot publish there: the bucket 'no-such-bucket-45' does not exist"
    )
    assert not (tmp_path / "out").exists()


def test_an_output_key_with_an_empty_part_is_refused_before_the_work(
    s3_server, dumps: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """``s3://b//x`` and ``s3:///x``: refused, naming the key to give, before a dump is read; nothing is written."""
    from wikipedia_ipc import main

    fs, bucket = s3_server.fs(), s3_server.bucket()
    for output, plain in ((f"s3://{bucket}//x", f"s3://{bucket}/x"), (f"s3://{bucket}/a//b/", f"s3://{bucket}/a/b")):
        arguments = ["build", str(dumps[0]), "--configs", "gold", "--quiet", "--tagger", "perceptron"]
        assert main([*arguments, "--output", output]) == 2
        error = capsys.readouterr().err.strip().splitlines()[-1]
        assert error.startswith(f"error: {output}: the folder's key has an empty part (a leading or doubled /)")
        assert error.endswith(f"give {plain}")
    fs.invalidate_cache()
    assert fs.find(bucket) == []


def test_a_card_naming_a_part_the_store_does_not_list_is_not_published(
    s3_server, dumps: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, perceptron_available: None
) -> None:
    """An upload lost before the commit (a part the store does not list under the staging prefix): the build fails
    naming it, before the commit; the folder keeps the old build, and no staging prefix is left."""
    fs, url = s3_server.fs(), f"s3://{s3_server.bucket()}/out"
    build([dumps[0]], [GOLD], url, tagger="perceptron", show_progress=False)
    before = bucket_snapshot(fs, url)
    real = builder.publish.bucket.BucketFolder.upload

    def lossy(self, local: Path, name: str) -> None:  # noqa: ANN001
        if not name.endswith(".parquet"):
            real(self, local, name)

    monkeypatch.setattr(builder.publish.bucket.BucketFolder, "upload", lossy)
    with pytest.raises(OutputError, match=r"the card would name gold/train-.*\.parquet.*, which the store does not"):
        build([dumps[1]], [GOLD], url, tagger="perceptron", show_progress=False)
    assert bucket_snapshot(fs, url) == before and hidden(fs, url) == []


def test_the_scratch_mirror_of_a_killed_bucket_build_is_removed_by_the_next(s3_server, tmp_path: Path) -> None:
    """A bucket build killed with SIGKILL leaves its local mirror; the next build's start removes it (marked by the
    toolkit, its lock gone with the process), and leaves a look-alike the toolkit did not mark."""
    from builder.publish.bucket import SCRATCH_PREFIX

    url = f"s3://{s3_server.bucket()}/out"
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    environment = {**os.environ, "TMPDIR": str(temporary)}
    code = f"""
import os, signal
from builder.publish.bucket import BucketPublisher
publisher = BucketPublisher({url!r}, ["gold"]).open()
print(publisher._scratch, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""
    process = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=environment)
    assert process.returncode == -signal.SIGKILL, process.stderr[-2000:]
    orphan = Path(process.stdout.strip())
    assert orphan.parent == temporary and orphan.name.startswith(SCRATCH_PREFIX) and (orphan / "mirror").is_dir()
    alike = temporary / f"{SCRATCH_PREFIX}mine"
    alike.mkdir()
    (alike / "notes.txt").write_text("keep me\n")
    code = f"""
from builder.publish.bucket import BucketPublisher
BucketPublisher({url!r}, ["gold"]).open().close()
"""
    process = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=environment)
    assert process.returncode == 0, process.stderr[-2000:]
    assert "took over the lock of a build that was killed on this host" in process.stderr
    assert sorted(path.name for path in temporary.iterdir()) == [alike.name]
    assert (alike / "notes.txt").read_text() == "keep me\n"
