"""Requests to a dump mirror that is not trusted to behave.

A socket timeout bounds one ``recv``, not a transfer, and a body may be as long as the
server likes: :class:`Watch` ends a request that stalls (no answer within ``timeout``
seconds, or fewer than ``min_rate`` bytes per second over any ``timeout`` seconds), the
readers never take more bytes than they were told to expect, and transient failures are
tried again a bounded number of times (:func:`retrying`). Unreachable mirrors fail at once
(:class:`OfflineError`). Only the standard library talks to the network.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import functools
import http.client
import os
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any, TypeVar

from builder.common import plural

__all__ = [
    "CHUNK_SIZE",
    "DownloadError",
    "Network",
    "NotFound",
    "OfflineError",
    "Transient",
    "Watch",
    "human_size",
    "open_url",
    "read_document",
    "read_some",
    "retrying",
]

CHUNK_SIZE = 1 << 20
USER_AGENT = "wikipedia-ipc dump downloader (https://github.com/webis-de/wikipedia-ipc)"
# dumpstatus.json of enwiki is about 100 kB and a wiki's run listing a few kB: more is not one of them
MAX_INDEX_BYTES = 32 * 10**6
# no route, no name, nobody listening: waiting will not help, so these are not retried
_OFFLINE_ERRNOS = {errno.ECONNREFUSED, errno.ENETUNREACH, errno.EHOSTUNREACH, errno.ENETDOWN}
_RETRIED_STATUS = {408, 429, 500, 502, 503, 504}
Result = TypeVar("Result")
_TOO_BIG = "a dump run's status file or listing is far smaller: is --mirror a dump mirror?"


class DownloadError(Exception):
    """A dump run or file that cannot be fetched or does not verify; the message names it."""


class OfflineError(DownloadError):
    """The mirror cannot be reached at all (no route, no DNS, connection refused)."""


class NotFound(DownloadError):
    """HTTP 404: the mirror has no such run or file."""


class Transient(Exception):
    """A failure that may pass: a dropped connection, a timeout, a 5xx answer."""


@dataclasses.dataclass(frozen=True)
class Network:
    """How long to wait for the mirror, and how often to try again what can be transient.

    An attempt ends when the mirror gives no answer within ``timeout`` seconds, or sends
    fewer than ``min_rate`` bytes per second over any ``timeout`` seconds of a transfer; so a
    stalled mirror costs at most ``attempts × timeout`` plus the waits between attempts
    (5.5 minutes with the defaults), and one that trickles at the minimum rate at most the
    file's size / ``min_rate`` per attempt.
    """

    timeout: float = 60.0  # seconds without an answer, or below min_rate, that end an attempt
    attempts: int = 5  # tries per request, the first included
    backoff: float = 2.0  # seconds before the second try, doubled before each further one
    min_rate: float = 10_000.0  # bytes per second, averaged over each timeout window of a transfer

    def worst_stall(self) -> float:
        """Seconds a mirror that stalls every attempt can hold one file: the attempts and the waits between."""
        return self.attempts * self.timeout + sum(self.backoff * 2**k for k in range(self.attempts - 1))


class Watch:
    """Ends a request that stalls by shutting its socket down, from a thread of its own.

    A socket timeout bounds one ``recv``, not a transfer: a mirror that sends its headers
    or its body a byte at a time never trips it. The watch bounds progress instead: the
    answer (status and headers) must come within ``timeout`` seconds, and every
    ``timeout`` seconds of the body must bring at least ``min_rate × timeout`` bytes.
    """

    def __init__(self, network: Network) -> None:
        self.timeout = network.timeout
        self.least = max(1, int(network.min_rate * network.timeout))
        self.min_rate = network.min_rate
        self.reason: str | None = None
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._started = time.monotonic()
        self._answered = False
        self._window = self._started
        self._bytes = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="download-watch", daemon=True)

    def __enter__(self) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, *exception: object) -> None:
        self._done.set()
        self._thread.join()

    def attach(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            if self.reason is not None:
                self._shut(sock)

    def answered(self) -> None:
        """The status and headers are in: from now on the body's rate counts."""
        with self._lock:
            self._answered = True
            self._window = time.monotonic()
            self._bytes = 0

    def received(self, count: int) -> None:
        with self._lock:
            self._bytes += count

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        with contextlib.suppress(OSError):  # already closed: nothing left to wait for
            sock.shutdown(socket.SHUT_RDWR)

    def _run(self) -> None:
        tick = min(0.5, self.timeout / 5)
        while not self._done.wait(tick):
            now = time.monotonic()
            with self._lock:
                if not self._answered:
                    if now - self._started >= self.timeout:
                        self.reason = f"no answer within {self.timeout:g} s"
                elif now - self._window >= self.timeout:
                    if self._bytes < self.least:
                        self.reason = (
                            f"stalled: {plural(self._bytes, 'byte')} in {self.timeout:g} s, below the minimum "
                            f"rate of {human_size(int(self.min_rate))}/s (--min-rate)"
                        )
                    self._window, self._bytes = now, 0
                if self.reason is not None:
                    for sock in self._sockets:
                        self._shut(sock)
                    return

    def check(self) -> None:
        """After an error or an early end of the body: a stall is what it was, and may pass."""
        if self.reason is not None:
            raise Transient(self.reason)


class _Watched:
    """Hands a connection's socket to its watch once it is connected (a mixin before the connection class)."""

    sock: socket.socket

    def __init__(self, *arguments: Any, watch: Watch, **options: Any) -> None:
        super().__init__(*arguments, **options)
        self._watch = watch

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        self._watch.attach(self.sock)


class _WatchedHTTPConnection(_Watched, http.client.HTTPConnection):
    pass


class _WatchedHTTPSConnection(_Watched, http.client.HTTPSConnection):
    pass


class _WatchedHTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, watch: Watch) -> None:
        super().__init__()
        self._watch = watch

    def http_open(self, request: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_WatchedHTTPConnection, watch=self._watch), request)


class _WatchedHTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, watch: Watch) -> None:
        super().__init__()
        self._watch = watch

    def https_open(self, request: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(
            functools.partial(_WatchedHTTPSConnection, watch=self._watch), request, context=self._context
        )


def human_size(size: int) -> str:
    """``22.3 GB``: a byte count as people read it (powers of 1000, as Wikimedia's pages show)."""
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} bytes"


def _offline_reason(error: BaseException) -> str | None:
    """Why the mirror is unreachable, if the error says so; ``None`` for what may pass."""
    if isinstance(error, socket.gaierror):
        return f"cannot resolve the host name ({error.strerror or error})"
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, OSError) and error.errno in _OFFLINE_ERRNOS:
        return os.strerror(error.errno).lower()
    return None


def _open(url: str, network: Network, watch: Watch, start: int = 0) -> http.client.HTTPResponse:
    """Open ``url`` (from byte ``start`` on); an unreachable mirror is :class:`OfflineError`, at once."""
    headers = {"User-Agent": USER_AGENT}
    if start:
        headers["Range"] = f"bytes={start}-"
    request = urllib.request.Request(url, headers=headers)
    opener = urllib.request.build_opener(_WatchedHTTPHandler(watch), _WatchedHTTPSHandler(watch))
    try:
        response = opener.open(request, timeout=network.timeout)
    except BaseException:
        watch.check()
        raise
    else:
        watch.answered()
        return response


def open_url(url: str, network: Network, watch: Watch, start: int = 0) -> http.client.HTTPResponse:
    """:func:`_open`, with urllib's and the socket's errors told apart: what may pass, and what will not."""
    try:
        return _open(url, network, watch, start)
    except urllib.error.HTTPError as error:
        error.close()
        if error.code in _RETRIED_STATUS:
            raise Transient(f"HTTP {error.code} {error.reason}") from None
        if error.code == 404:
            raise NotFound(f"{url}: HTTP 404 Not Found") from None
        raise DownloadError(f"{url}: HTTP {error.code} {error.reason}") from None
    except urllib.error.URLError as error:
        reason = _offline_reason(error.reason) if isinstance(error.reason, BaseException) else None
        if reason:
            raise OfflineError(f"{url}: {reason}; is this machine offline, or the mirror down?") from None
        raise Transient(str(error.reason)) from None
    except (http.client.HTTPException, ConnectionError, TimeoutError) as error:
        raise Transient(f"{type(error).__name__}: {error}") from None


def read_some(response: http.client.HTTPResponse, watch: Watch, size: int) -> bytes:
    """At most ``size`` bytes of the body, after at most one ``recv``, so that the watch sees every byte."""
    try:
        chunk = response.read1(size)
    except (OSError, http.client.HTTPException) as error:
        watch.check()
        raise Transient(f"{type(error).__name__}: {error}") from None
    if not chunk:
        watch.check()
    watch.received(len(chunk))
    return chunk


def retrying(
    what: str, network: Network, action: Callable[[], Result], note: Callable[[str], None] | None = None
) -> Result:
    """Run ``action`` until it succeeds; transient failures are tried again with exponential backoff, boundedly."""
    for attempt in range(1, network.attempts + 1):
        try:
            return action()
        except (Transient, http.client.HTTPException, ConnectionError, TimeoutError) as error:
            if attempt == network.attempts:
                raise DownloadError(f"{what}: {error} (gave up after {plural(attempt, 'attempt')})") from None
            wait = network.backoff * 2 ** (attempt - 1)
            if note is not None:
                note(f"{what}: {error}; trying again in {wait:g} s")
            time.sleep(wait)
    raise AssertionError("unreachable")  # the loop returns or raises


def read_document(url: str, network: Network) -> bytes:
    """A small document of the mirror (``dumpstatus.json``, a run listing), at most :data:`MAX_INDEX_BYTES`."""

    def read() -> bytes:
        with Watch(network) as watch, open_url(url, network, watch) as response:
            if response.length is not None and response.length > MAX_INDEX_BYTES:
                raise DownloadError(f"{url}: {response.length:,} bytes; {_TOO_BIG}")
            chunks, total = [], 0
            while chunk := read_some(response, watch, CHUNK_SIZE):
                chunks.append(chunk)
                total += len(chunk)
                if total > MAX_INDEX_BYTES:
                    raise DownloadError(f"{url}: more than {human_size(MAX_INDEX_BYTES)}; {_TOO_BIG}")
            if response.length:
                raise Transient(f"the connection closed {response.length:,} bytes before the end")
            return b"".join(chunks)

    return retrying(url, network, read)
