"""A real Spark standalone cluster on 127.0.0.1: a master and a worker started from pyspark's own ``spark-class``,
each a process of its own with its own Python workers, and builds submitted to ``spark://127.0.0.1:…`` that must
give the local engine's rows byte for byte (Wikipedia gold and silver from ``spark-submit`` with the dump and the
output in an S3 bucket; bronze, the cross-lingual config and a web crawl from a session a program opens on the
cluster).

Java is what the cluster needs beyond the test extras: without it the tests are skipped, except under CI, where
its absence is a failure. Every start and every build is bounded in time; the processes are stopped at the end.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import import_or_skip

import wikipedia_ipc
from builder.config import BRONZE, SILVER, WEB
from builder.engines.local import build

import_or_skip("pyspark")  # CI has PySpark: under CI=true its absence fails

STARTUP_SECONDS = 120  # a master or a worker that has not said it is up by then has failed
BUILD_SECONDS = 600
ROOT = Path(wikipedia_ipc.__file__).resolve().parent


class Daemon:
    """One process of the cluster, its output in a log file the test reads to know when it is up."""

    def __init__(self, name: str, command: list[str], folder: Path, environment: dict[str, str]) -> None:
        self.name = name
        self.log = folder / f"{name}.log"
        with self.log.open("wb") as output:  # the child keeps its own descriptor
            self.process = subprocess.Popen(
                command, stdout=output, stderr=subprocess.STDOUT, env=environment, start_new_session=True
            )

    def wait_for(self, pattern: str) -> re.Match:
        """The first match of ``pattern`` in the log, waited for; a failure with the log's end if it never comes."""
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            found = re.search(pattern, self.log.read_text(errors="replace"))
            if found:
                return found
            if self.process.poll() is not None:
                break
            time.sleep(0.2)
        tail = self.log.read_text(errors="replace")[-3000:]
        pytest.fail(f"the Spark {self.name} did not say {pattern!r} within {STARTUP_SECONDS} s:\n{tail}")

    def stop(self) -> None:
        """SIGTERM to the process group (the JVM and anything it started), SIGKILL if it outlives 30 s."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, shared_spark) -> Iterator[str]:  # noqa: ANN001
    """The master's URL, with one worker of two cores registered; the run's local session is stopped first (a
    driver holds one Spark context at a time) and made again by the next test that asks for it."""
    import pyspark

    if shutil.which("java") is None:
        message = "a Spark standalone cluster needs Java (a JDK 17 or 21 on the PATH)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    shared_spark.stop()
    home = Path(pyspark.__file__).parent
    folder = tmp_path_factory.mktemp("cluster")
    environment = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",  # no REST server on a fixed port
    }
    spark_class = str(home / "bin" / "spark-class")
    master = Daemon(
        "master",
        [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", "0"]
        + ["--webui-port", "0"],
        folder,
        environment,
    )
    daemons = [master]
    try:
        port = master.wait_for(r"Successfully started service 'sparkMaster' on port (\d+)").group(1)
        url = f"spark://127.0.0.1:{port}"
        master.wait_for(r"elected leader")
        worker = Daemon(
            "worker",
            [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", "2"]
            + ["--memory", "4g", "--webui-port", "0", "--work-dir", str(folder / "work"), url],
            folder,
            environment,
        )
        daemons.append(worker)
        master.wait_for(r"Registering worker 127\.0\.0\.1:\d+ with 2 cores")
        yield url
    finally:
        for daemon in reversed(daemons):
            daemon.stop()


# What a program gives its session on a cluster (the engine sets no defaults there: a cluster's settings are its
# administrator's): the executors' Python, where the driver can be reached, the shuffle partitions for two cores.
CLUSTER_SETTINGS = {
    "spark.pyspark.python": sys.executable,
    "spark.driver.host": "127.0.0.1",
    "spark.default.parallelism": "2",
    "spark.sql.shuffle.partitions": "2",
    "spark.executor.memory": "2g",
    "spark.python.worker.memory": "1g",
    "spark.ui.enabled": "false",
}


@pytest.fixture
def on_cluster(cluster: str) -> Iterator[object]:
    """A session of this process on the cluster (an application of its own), stopped at the test's end."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(cluster).appName("wikipedia-ipc-cluster-test")
    for key, value in CLUSTER_SETTINGS.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()


def test_crosslingual_and_web_builds_on_the_cluster_give_the_local_rows(
    on_cluster,
    tmp_path: Path,
    perceptron_available: None,  # noqa: ANN001
) -> None:
    """Four editions with the cross-lingual config, the sample's history (bronze), and a crawl under the perceptual
    equivalence, on the cluster's executors: the local engine's files byte for byte, and the same funnels."""
    from test_crosslingual import CROSSLINGUAL, berlin_dumps
    from test_spark import same_output

    from benchmarks.web_crawl import write_shared_images_crawl
    from builder.engines.spark import build_spark

    dumps = berlin_dumps(("de", "fr", "ja", "he"))
    configs = [replace(config, caption_rule="none") for config in (SILVER, CROSSLINGUAL)]
    local = build(list(dumps), configs, tmp_path / "local", workers=2, show_progress=False, languages=dumps)
    remote = build_spark(list(dumps), configs, tmp_path / "cluster", workers=2, spark=on_cluster, languages=dumps)
    assert remote.rows == local.rows and remote.rows["crosslingual"] > 0
    for config in remote.rows:
        same_output(tmp_path / "local", tmp_path / "cluster", config)

    history = wikipedia_ipc.SAMPLE_DUMP.with_name("enwiki-20240101-sample-pages-meta-history.xml.bz2")
    build([history], [BRONZE], tmp_path / "local", tagger="perceptron", show_progress=False)
    build_spark([history], [BRONZE], tmp_path / "cluster", tagger="perceptron", workers=2, spark=on_cluster)
    same_output(tmp_path / "local", tmp_path / "cluster", "bronze")

    crawl = write_shared_images_crawl(tmp_path / "shared.warc.gz")
    web = replace(WEB, equivalence="phash", splits=(), set_size_z=0.05)
    build([str(crawl)], [web], tmp_path / "web-local", tagger="perceptron", workers=1, show_progress=False)
    build_spark([str(crawl)], [web], tmp_path / "web-cluster", tagger="perceptron", workers=2, spark=on_cluster)
    same_output(tmp_path / "web-local", tmp_path / "web-cluster", "web")


def test_spark_submit_with_data_and_output_on_s3(
    cluster: str, s3_server, tmp_path: Path, perceptron_available: None
) -> None:  # noqa: ANN001
    """docs/building.md's cluster command with the data on an object store: the dump read by the executors in ranges
    from the bucket, the executors' parts uploaded there, the build published into it: the local folder, byte for
    byte."""
    import pyspark
    from test_object_store import bucket_snapshot
    from test_output import snapshot

    fs, bucket = s3_server.fs(), s3_server.bucket()
    fs.put_file(str(wikipedia_ipc.SAMPLE_DUMP), f"{bucket}/dumps/{wikipedia_ipc.SAMPLE_DUMP.name}")
    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    command = [str(submit), "--master", cluster, "--total-executor-cores", "2", "--executor-memory", "2g"]
    for key, value in CLUSTER_SETTINGS.items():
        command += ["--conf", f"{key}={value}"]
    for name in sorted(name for name in os.environ if name.startswith("AWS_")):  # as a user passes credentials
        command += ["--conf", f"spark.executorEnv.{name}={os.environ[name]}"]
    command += ["wikipedia_ipc.py", "build", f"s3://{bucket}/dumps/{wikipedia_ipc.SAMPLE_DUMP.name}"]
    command += ["--engine", "spark", "--workers", "2", "--tagger", "perceptron", "--quiet"]
    command += ["--output", f"s3://{bucket}/cluster"]
    done = subprocess.run(
        command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=BUILD_SECONDS, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    local = tmp_path / "local"
    build([wikipedia_ipc.SAMPLE_DUMP], [wikipedia_ipc.GOLD, SILVER], local, tagger="perceptron", show_progress=False)
    assert bucket_snapshot(fs, f"s3://{bucket}/cluster") == snapshot(local)
