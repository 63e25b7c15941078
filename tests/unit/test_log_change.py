"""A log directory's stamp (``log_change``): one ``lstat`` says whether its names changed.

On this machine's real filesystem: after any sequence of the changes writers and cleaners make
in ``_delta_log`` (a commit put in place by a rename or a link, a file written, deleted or
renamed, a directory made, a link made, the directory's mode changed, the whole directory
replaced), the stamp no longer holds; after changes of files' contents alone (no name comes or
goes), it does, and the names are the same. A stamp is not given where a later change could
leave it equal: a directory changed within ``RACY_NS`` of the look, a link, no directory, an
object store, a filesystem not known to be local.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from python_ops.maintenance.facts.log_change import (
    LOCAL_FILESYSTEMS,
    RACY_NS,
    LogStamp,
    Mounts,
    log_stamp,
    log_unchanged,
)

# the changes that add, remove or rename an entry of the log directory
CHANGES = (
    "write new file",
    "rename into place",
    "link into place",
    "delete a file",
    "rename a file",
    "make a directory",
    "make a link",
    "change the mode",
    "replace the directory",
)
# what leaves every name in place
KEEPS = ("rewrite a file", "append to a file", "read a file", "stat a file")


def _later() -> int:
    """A look's time late enough that the directory's last change is not racy."""
    return time.time_ns() + RACY_NS + 1


def _table(root: Path, commits: int = 3) -> Path:
    log = root / "_delta_log"
    log.mkdir(parents=True)
    for version in range(commits):
        (log / f"{version:020d}.json").write_text('{"commitInfo":{}}\n')
    return root


def _apply(log: Path, change: str, step: int) -> None:
    files = sorted(p for p in log.iterdir() if p.is_file() and not p.is_symlink())
    some = files[step % len(files)] if files else None
    if change == "write new file":
        (log / f"new-{step}.json").write_text("{}\n")
    elif change == "rename into place":
        staged = log.parent / f"staged-{step}"
        staged.write_text("{}\n")
        os.rename(staged, log / f"{900 + step:020d}.json")
    elif change == "link into place":
        staged = log / f".{step}.tmp"
        staged.write_text("{}\n")
        os.link(staged, log / f"{800 + step:020d}.json")
        staged.unlink()
    elif change == "delete a file" and some is not None:
        some.unlink()
    elif change == "rename a file" and some is not None:
        os.rename(some, log / f"renamed-{step}")
    elif change == "make a directory":
        (log / f"dir-{step}").mkdir()
    elif change == "make a link":
        (log / f"link-{step}").symlink_to("/nonexistent")
    elif change == "change the mode":
        log.chmod(0o700 if step % 2 else 0o755)
    elif change == "replace the directory":
        os.rename(log, log.parent / f"old-log-{step}")
        log.mkdir()
        for name in (p.name for p in files):
            (log / name).write_text("{}\n")
    elif change in ("delete a file", "rename a file"):
        (log / f"new-{step}.json").write_text("{}\n")  # nothing to delete: add instead
    else:
        raise AssertionError(change)


def _keep(log: Path, kept: str) -> None:
    files = sorted(p for p in log.iterdir() if p.is_file() and not p.is_symlink())
    if not files:
        return  # every file deleted: nothing whose contents to touch
    some = files[0]
    if kept == "rewrite a file":
        some.write_text('{"commitInfo":{"rewritten":true}}\n')
    elif kept == "append to a file":
        with some.open("a") as fh:
            fh.write("\n")
    elif kept == "read a file":
        some.read_bytes()
    elif kept == "stat a file":
        some.stat()


@settings(max_examples=60, deadline=None)
@given(
    changes=st.lists(st.sampled_from(CHANGES), min_size=1, max_size=4),
    keeps=st.lists(st.sampled_from(KEEPS), max_size=3),
)
@example(changes=["delete a file"] * 3 + ["write new file"], keeps=["rewrite a file"])
def test_any_change_of_the_logs_names_breaks_the_stamp(
    tmp_path_factory: pytest.TempPathFactory, changes: list[str], keeps: list[str]
) -> None:
    table = _table(tmp_path_factory.mktemp("t"))
    stamp = log_stamp(str(table), now_ns=_later())
    assert stamp is not None
    time.sleep(0.02)  # a later change, as a build's commit comes after the look
    for step, change in enumerate(changes):
        if keeps:
            _keep(table / "_delta_log", keeps[step % len(keeps)])
        _apply(table / "_delta_log", change, step)
    assert not log_unchanged(stamp, now_ns=stamp.looked_ns), changes


@settings(max_examples=30, deadline=None)
@given(keeps=st.lists(st.sampled_from(KEEPS), min_size=1, max_size=5))
def test_a_stamp_holds_while_no_name_comes_or_goes(
    tmp_path_factory: pytest.TempPathFactory, keeps: list[str]
) -> None:
    table = _table(tmp_path_factory.mktemp("t"))
    names = sorted(os.listdir(table / "_delta_log"))
    stamp = log_stamp(f"file://{table}", now_ns=_later())
    assert stamp is not None
    for kept in keeps:
        _keep(table / "_delta_log", kept)
    assert log_unchanged(stamp, now_ns=stamp.looked_ns)
    assert sorted(os.listdir(table / "_delta_log")) == names


def test_a_directory_changed_within_the_racy_window_gives_no_stamp(tmp_path: Path) -> None:
    table = _table(tmp_path / "t")
    assert log_stamp(str(table)) is None  # just written: a change now could keep its times
    changed = os.lstat(table / "_delta_log").st_ctime_ns
    assert log_stamp(str(table), now_ns=changed + RACY_NS - 1) is None
    assert log_stamp(str(table), now_ns=changed + RACY_NS) is not None


def test_no_stamp_for_a_link_a_file_no_log_or_an_object_store(tmp_path: Path) -> None:
    real = _table(tmp_path / "real")
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "_delta_log").symlink_to(real / "_delta_log")
    filed = tmp_path / "filed"
    filed.mkdir()
    (filed / "_delta_log").write_text("")
    later = _later()
    assert log_stamp(str(real), now_ns=later) is not None
    assert log_stamp(str(linked), now_ns=later) is None  # never followed
    assert log_stamp(str(filed), now_ns=later) is None
    assert log_stamp(str(tmp_path / "absent"), now_ns=later) is None
    assert log_stamp("s3://bucket/table", now_ns=later) is None
    absent = str(tmp_path / "absent" / "_delta_log")
    assert not log_unchanged(LogStamp(0, 0, 0, 0, 0, absent))
    # every spelling of the location stamps the same directory
    spelled = {log_stamp(where, now_ns=later) for where in (str(real), f"file:{real}", f"{real}/")}
    assert len(spelled) == 1


def test_a_clock_found_earlier_than_the_look_trusts_no_stamp(tmp_path: Path) -> None:
    table = _table(tmp_path / "t")
    later = _later()
    stamp = log_stamp(str(table), now_ns=later)
    assert stamp is not None
    assert log_unchanged(stamp, now_ns=later)
    assert log_unchanged(stamp, now_ns=later + 1)
    # stepped back since the look: a change since may carry the directory's old times
    assert not log_unchanged(stamp, now_ns=later - 1)


def test_a_filesystem_not_known_to_be_local_gives_no_stamp(tmp_path: Path) -> None:
    table = _table(tmp_path / "t")
    device = os.lstat(table / "_delta_log").st_dev
    dev = f"{os.major(device)}:{os.minor(device)}"
    mounted_as = tmp_path / "mountinfo"

    def mounts(kind: str) -> Mounts:
        mounted_as.write_text(
            f"27 1 {dev} / / rw,relatime - {kind} server:/export rw\n"
            "22 27 0:21 / /proc rw,relatime - proc proc rw\n"
        )
        return Mounts(str(mounted_as))

    later = _later()
    assert log_stamp(str(table), now_ns=later, mounts=mounts("nfs4")) is None
    assert log_stamp(str(table), now_ns=later, mounts=mounts("fuse.sshfs")) is None
    assert log_stamp(str(table), now_ns=later, mounts=mounts("ext4")) is not None
    # a device the file does not name: read again once, then not for every table
    unknown = mounts("ext4")
    assert unknown.kind(device + 1) is None
    mounted_as.write_text(
        f"28 1 {os.major(device + 1)}:{os.minor(device + 1)} / /x rw - ext4 d rw\n"
    )
    assert unknown.kind(device + 1) is None
    assert unknown.kind(device) == "ext4"
    mounted_as.write_text("not a mountinfo line\n")
    assert log_stamp(str(table), now_ns=later, mounts=Mounts(str(mounted_as))) is None
    assert log_stamp(str(table), now_ns=later, mounts=Mounts(str(tmp_path / "none"))) is None


def test_this_machines_mounts_name_the_filesystem_of_a_temporary_directory(
    tmp_path: Path,
) -> None:
    kind = Mounts().kind(os.lstat(tmp_path).st_dev)
    assert kind is not None
    if kind not in LOCAL_FILESYSTEMS:
        pytest.skip(f"the temporary directory is on {kind}: no stamp is trusted there")
    assert log_stamp(str(_table(tmp_path / "t")), now_ns=_later()) is not None
