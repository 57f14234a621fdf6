"""Shared fixtures: small dumps written on the fly, and the models CI must have."""

from __future__ import annotations

import bz2
import importlib
import os
import re
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from builder.data.make_sample import dump_xml

# Each test process gives the thread pools of its libraries (OpenMP, BLAS, PyTorch; read when they load) its share
# of the cores: two processes with a pool as wide as the machine each spin against each other (scikit-learn's
# cross-validation took 8 times longer beside the other process). A value the user set is kept.
if "PYTEST_XDIST_WORKER_COUNT" in os.environ:
    SHARE = str(max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])))
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, SHARE)

# Every JVM of the run (the Spark session, spark-submit, the standalone cluster's daemons and executors) compiles
# with the JIT's first tier only: its second tier spent half the CPU of a small Spark build compiling code that
# the tests' small data never run long enough to repay (a user's long builds keep the JVM's default).
os.environ.setdefault("JAVA_TOOL_OPTIONS", "-XX:TieredStopAtLevel=1")

# The suite runs in two processes (pytest-xdist, ``-n 2 --dist loadfile`` in pyproject.toml: each test file in one
# of them, its module fixtures made once). The longest files are handed out first, so that neither process is left
# with a long one at the end while the other waits (docs/testing.md lists what each takes); pyproject.toml's
# ``--no-loadscope-reorder`` keeps this order (xdist re-sorts files by their number of tests otherwise).
LONGEST_FIRST = (  # by their seconds in the newest run (2026-12-06, two processes), the longest first
    "test_spark.py",  # 157
    "test_object_store.py",  # 91
    "test_deja_visual.py",  # 89
    "test_output.py",  # 56
    "test_paraphrase.py",  # 56
    "test_web_scale.py",  # 56
    "test_metrics_cli.py",  # 52
    "test_spark_cluster.py",  # 51
    "test_captions_build.py",  # 44
    "test_deja_build.py",  # 38
    "test_compare_inputs.py",  # 32
    "test_dump_faults.py",  # 31
    "test_sparksmall.py",  # 30
    "test_first_hour.py",  # 27
    "test_cli_options.py",  # 24
    "test_worker_lifetime.py",  # 22
    "test_compare.py",  # 22
    "test_crossencoder.py",  # 22
    "test_copies.py",  # 19
    "test_html_captions.py",  # 18
    "test_incremental.py",  # 17
    "test_progress.py",  # 17
    "test_french_build.py",  # 16
    "test_web_build.py",  # 15
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest files first, the others in their usual order (a stable sort)."""
    rank = {name: index for index, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


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


def import_or_skip(module: str) -> object:
    """``pytest.importorskip`` for what the test extras install (PySpark, stanza, spaCy): CI has it, so under
    CI its absence fails, as NLTK's model's does; elsewhere the test is skipped."""
    if os.environ.get("CI") == "true":
        try:
            return importlib.import_module(module)
        except ImportError as error:
            pytest.fail(f"CI must have {module} (the test extras): {error}", pytrace=False)
    return pytest.importorskip(module)


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
def deja_crawl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A crawl whose captions repeat across sites and images (benchmarks/web_crawl.py: REPEATED), for Déjà's tests."""
    from benchmarks.web_crawl import write_repeated_captions_crawl

    return write_repeated_captions_crawl(tmp_path_factory.mktemp("deja-crawl") / "repeated.warc.gz")


@pytest.fixture(scope="session")
def nltk_perceptron() -> None:
    """The perceptron tagger with NLTK's own model: CI has it (NLTK_DATA), so under CI its absence is a failure."""
    require_nltk_perceptron()


# The one Spark session of a test run: ``local[2]`` (the machine's two cores) as the engine makes it
# (``spark_session``: shuffles at the master's cores, room for a tagging model in each Python worker), without the
# web UI (no server and no port search per run). Made once, it saves a JVM start and a worker pool per test.
SPARK_TEST_SETTINGS = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"}


class SharedSpark:
    """The test run's ``local[2]`` session, made when a test first asks for it and again after a test stopped it."""

    def __init__(self) -> None:
        self.session = None

    def get(self):  # noqa: ANN201 - a pyspark.sql.SparkSession
        from pyspark import SparkContext

        if self.session is not None and SparkContext._active_spark_context is self.session.sparkContext:
            return self.session
        from builder.engines.spark import spark_session

        # the engine gives local workers this interpreter through PYSPARK_PYTHON (read at the session's start);
        # the environment is left as the tests found it
        previous = os.environ.get("PYSPARK_PYTHON")
        try:
            self.session = spark_session(2, SPARK_TEST_SETTINGS)
        finally:
            if previous is None:
                os.environ.pop("PYSPARK_PYTHON", None)
            else:
                os.environ["PYSPARK_PYTHON"] = previous
        self.session.sparkContext.setLogLevel("ERROR")
        return self.session

    def stop(self) -> None:
        if self.session is not None:
            self.session.stop()
            self.session = None


@pytest.fixture(scope="session")
def shared_spark() -> Iterator[SharedSpark]:
    """The holder of the run's one Spark session, stopped at the end of the run."""
    import_or_skip("pyspark")
    shared = SharedSpark()
    yield shared
    shared.stop()


@pytest.fixture
def spark(shared_spark: SharedSpark):  # noqa: ANN201 - a pyspark.sql.SparkSession
    """The run's one ``local[2]`` Spark session: pass it to ``build_spark(..., spark=spark)``, which leaves a given
    session running (a build that makes its own session stops it at its end, and would stop this one too)."""
    return shared_spark.get()


@pytest.fixture(autouse=True)
def spread_spark_builds() -> Iterator[None]:
    """Every Spark build of the tests is spread over the session's stages, however small its input (the tests'
    inputs are a few kB, which the engine would build in one task, :mod:`builder.engines.spark.one_task`): a test of the
    one-task path gives ``spark_one_task_bytes`` itself. A patch of its own, which a test's ``monkeypatch.undo()``
    leaves in place."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("builder.engines.spark.one_task.ONE_TASK_BYTES", 0)
        yield


@pytest.fixture
def no_shared_spark(shared_spark: SharedSpark) -> None:
    """For a test that must make (and stop) a session of its own: the shared one is stopped first, and made
    again for the next test that asks for it."""
    shared_spark.stop()


class S3Server:
    """moto's S3-compatible server on 127.0.0.1, as a separate process: real HTTP, real S3 requests."""

    def __init__(self, process: subprocess.Popen, endpoint: str) -> None:
        self.process = process
        self.endpoint = endpoint
        self._buckets = 0

    def bucket(self) -> str:
        """A new, empty bucket: each test gets its own."""
        import boto3

        self._buckets += 1
        name = f"test-{self._buckets}-{os.getpid()}"
        boto3.client("s3").create_bucket(Bucket=name)
        return name

    def fs(self):  # noqa: ANN201 - an s3fs.S3FileSystem
        import s3fs

        s3fs.S3FileSystem.clear_instance_cache()
        return s3fs.S3FileSystem()


S3_ENVIRONMENT = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """An S3 server for the run, and the ``AWS_*`` variables that point every client at it (the builds' child
    processes and Spark's Python workers inherit them). CI has moto and s3fs: there, their absence fails."""
    try:
        import boto3  # noqa: F401
        import moto.server  # noqa: F401
        import s3fs  # noqa: F401
    except ImportError as error:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must have moto[server] and s3fs (the test extras): {error}", pytrace=False)
        pytest.skip(f"no S3 server to test against: {error}")
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    endpoint, deadline, seen = None, time.monotonic() + 60, []
    while endpoint is None and time.monotonic() < deadline and process.poll() is None:
        line = process.stdout.readline()  # type: ignore[union-attr]
        seen.append(line)
        found = re.search(r"Running on (http://127\.0\.0\.1:\d+)", line)
        endpoint = found.group(1) if found else None
    if endpoint is None:
        process.kill()
        pytest.fail(f"moto's server did not start within 60 s: {''.join(seen)[-2000:]}", pytrace=False)
    threading.Thread(target=process.stdout.read, daemon=True).start()  # type: ignore[union-attr] - drain its log
    previous = {name: os.environ.get(name) for name in [*S3_ENVIRONMENT, "AWS_ENDPOINT_URL"]}
    os.environ.update({**S3_ENVIRONMENT, "AWS_ENDPOINT_URL": endpoint})
    try:
        yield S3Server(process, endpoint)
    finally:
        process.kill()
        process.wait(timeout=30)
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
