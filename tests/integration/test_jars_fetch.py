"""``python -m python_ops jars fetch``: the pinned jars from a Maven repository, sha256 checked.

The repository is a real HTTP server on 127.0.0.1 serving a Maven layout (``group/artifact/
version/artifact-version.jar``) made of the project's own jars, or of a tampered copy; the
command is the package's own (``python_ops.cli.main.main``).
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from python_ops.cli.main import main
from python_ops.delta_jars import find_delta_jars, pinned_jars, require_delta_jars
from python_ops.jars_fetch import file_sha256

pytestmark = pytest.mark.delta_jars


def _maven_layout(root: Path, *, tamper: bool = False) -> None:
    for jar, pin in zip(require_delta_jars(), pinned_jars(), strict=True):
        path = pin.url(str(root)).removeprefix(str(root)).lstrip("/")
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(jar, root / path)
        if tamper:
            with (root / path).open("ab") as handle:
                handle.write(b"not what the lock pins")


class _Repository:
    def __init__(self, root: Path) -> None:
        self.requests: list[str] = []
        log = self.requests

        class Handler(SimpleHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                log.append(self.path)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(root)))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/maven2"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def repository(tmp_path: Path) -> Iterator[tuple[Path, _Repository]]:
    root = tmp_path / "served"
    (root / "maven2").mkdir(parents=True)
    repo = _Repository(root)
    try:
        yield root / "maven2", repo
    finally:
        repo.server.shutdown()
        repo.server.server_close()


def test_fetch_downloads_checks_and_then_finds_the_jars(
    tmp_path: Path,
    repository: tuple[Path, _Repository],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    served, repo = repository
    _maven_layout(served)
    dest = tmp_path / "jars"
    assert main(["jars", "fetch", "--dest", str(dest), "--repository", repo.url]) == 0
    out = capsys.readouterr().out
    for pin in pinned_jars():
        assert file_sha256(dest / pin.file_name) == pin.sha256
        assert f"{dest / pin.file_name}: fetched from {pin.url(repo.url)}" in out
    assert sorted(p.name for p in dest.iterdir()) == sorted(p.file_name for p in pinned_jars())
    assert len(repo.requests) == len(pinned_jars())

    # again: every jar is there with its checksum, nothing is downloaded
    assert main(["jars", "fetch", "--dest", str(dest), "--repository", repo.url]) == 0
    assert "already there" in capsys.readouterr().out
    assert len(repo.requests) == len(pinned_jars())

    monkeypatch.setenv("SPARKDELTA_DELTA_JARS", str(dest))
    assert find_delta_jars() == [str(dest / p.file_name) for p in pinned_jars()]


def test_a_jar_that_does_not_match_the_lock_is_refused_and_not_left_behind(
    tmp_path: Path,
    repository: tuple[Path, _Repository],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    served, repo = repository
    _maven_layout(served, tamper=True)
    dest = tmp_path / "jars"
    dest.mkdir()
    wrong = dest / pinned_jars()[0].file_name
    wrong.write_bytes(b"an old, wrong jar")  # replaced only by a checked one, else removed
    assert main(["jars", "fetch", "--dest", str(dest), "--repository", repo.url]) == 2
    err = capsys.readouterr().err
    assert f"but the lock (python_ops/delta_jars.lock) pins {pinned_jars()[0].sha256}" in err
    assert list(dest.iterdir()) == []  # neither the tampered download nor the wrong jar
    monkeypatch.setenv("SPARKDELTA_DELTA_JARS", str(dest))
    assert find_delta_jars() is None
