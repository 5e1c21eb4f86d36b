"""templating.inputs: writing an output whole without ever replacing what is not a regular file (a device, a
FIFO, a link to one), never waiting on a FIFO, and keeping a rewritten file's mode and owner.

Reading inputs (a FIFO, a device, a file too large) is tested through the commands in tests/test_cli.py."""

from __future__ import annotations

import errno
import os
import socket
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from templating.inputs import write_text_whole

ROOT = Path(__file__).resolve().parent.parent

posix = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs and devices")
as_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="making a device node and giving files away need root"
)


def _kind(path: Path) -> str:
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        return f"link to {os.readlink(path)}"
    return "fifo" if stat.S_ISFIFO(info.st_mode) else "device" if stat.S_ISCHR(info.st_mode) else "file"


def _device(tmp_path: Path) -> Path:
    """A node of the character device /dev/null is (1, 3 on Linux), made for the test: a bug that replaced it
    would replace this node, never the machine's /dev/null."""
    node = tmp_path / "null"
    real = os.stat("/dev/null")
    os.mknod(node, stat.S_IFCHR | 0o666, real.st_rdev)
    return node


def _link_to_null(tmp_path: Path) -> Path:
    link = tmp_path / "out"
    link.symlink_to("/dev/null")
    return link


@posix
@pytest.mark.parametrize(
    "make",
    [pytest.param(_device, marks=as_root, id="device"), pytest.param(_link_to_null, id="link-to-a-device")],
)
def test_a_device_is_written_in_place_never_replaced(tmp_path: Path, make: Callable[[Path], Path]) -> None:
    target = make(tmp_path)
    before = _kind(target)
    write_text_whole(str(target), "findings\n")
    assert _kind(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]  # no temporary file left


@posix
@pytest.mark.parametrize("through_a_link", [False, True], ids=["fifo", "link-to-a-fifo"])
def test_a_fifo_being_read_gets_the_text_and_stays_a_fifo(tmp_path: Path, through_a_link: bool) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    target = fifo
    if through_a_link:
        target = tmp_path / "out"
        target.symlink_to(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, as `cat pipe` would be
    try:
        write_text_whole(str(target), "T001 found\n")
        assert os.read(reader, 100) == b"T001 found\n"
    finally:
        os.close(reader)
    assert _kind(fifo) == "fifo"
    assert _kind(target) == ("link to " + str(fifo) if through_a_link else "fifo")


@posix
def test_a_fifo_nothing_reads_is_an_error_never_a_wait(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    code = (
        "import errno, sys\nfrom templating.inputs import write_text_whole\n"
        "try:\n    write_text_whole(sys.argv[1], 'x')\n"
        "except OSError as exc:\n    print(errno.errorcode[exc.errno], exc.strerror)\n"
    )
    # the timeout only turns a hang into a failure: it times nothing
    done = subprocess.run(
        [sys.executable, "-c", code, str(fifo)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.stdout == "ENXIO a FIFO that nothing reads (start its reader first): not written\n", done.stderr
    assert _kind(fifo) == "fifo"


def test_a_regular_file_is_replaced_whole_keeping_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "report.txt"
    target.write_text("old\n", encoding="utf-8")
    target.chmod(0o640)
    inode = target.stat().st_ino
    write_text_whole(str(target), "new\n")
    assert target.read_text(encoding="utf-8") == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert target.stat().st_ino != inode  # a new file renamed over it: a reader never sees half of it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.txt"]


def test_a_link_to_a_regular_file_replaces_its_target_and_keeps_the_link(tmp_path: Path) -> None:
    (tmp_path / "reports").mkdir()
    target = tmp_path / "reports" / "lint.txt"
    target.write_text("old\n", encoding="utf-8")
    link = tmp_path / "latest.txt"
    link.symlink_to(target)
    write_text_whole(str(link), "new\n")
    assert _kind(link) == f"link to {target}"
    assert target.read_text(encoding="utf-8") == "new\n"


def test_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError) as caught:
        write_text_whole(str(tmp_path), "x")
    assert caught.value.errno == errno.EISDIR


@as_root
def test_a_file_of_another_user_keeps_its_owner_and_mode(tmp_path: Path) -> None:
    """Root rewriting (fixing) another user's file: the file stays theirs, with its mode."""
    target = tmp_path / "prompt.txt"
    target.write_text("old\n", encoding="utf-8")
    os.chown(target, 1234, 5678)
    target.chmod(0o604)
    write_text_whole(str(target), "new\n")
    info = target.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (1234, 5678, 0o604)
    assert target.read_text(encoding="utf-8") == "new\n"


@as_root
def test_a_file_whose_owner_cannot_be_kept_is_rewritten_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user who may write another user's file (group-writable) but not give a file away (not root: `chown`
    refused, as here): the file is edited in place (the same inode, owner and mode), not replaced by ours."""
    target = tmp_path / "prompt.txt"
    target.write_text("a longer old text\n", encoding="utf-8")
    os.chown(target, 1234, 5678)
    target.chmod(0o664)
    before = target.stat()

    def refuse(path: str, uid: int, gid: int) -> None:
        raise PermissionError(errno.EPERM, "Operation not permitted", path)

    monkeypatch.setattr(os, "chown", refuse)
    write_text_whole(str(target), "new\n")
    after = target.stat()
    assert target.read_text(encoding="utf-8") == "new\n"
    assert (after.st_ino, after.st_uid, after.st_gid, after.st_mode) == (
        before.st_ino,
        1234,
        5678,
        before.st_mode,
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prompt.txt"]


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="Unix sockets")
def test_a_socket_is_refused_with_what_it_is(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        with pytest.raises(OSError, match="a socket, which cannot be opened as a file: not written") as caught:
            write_text_whole(str(path), "x")
    assert caught.value.errno == errno.ENXIO
    assert stat.S_ISSOCK(path.lstat().st_mode)


# --- reading a file's bytes


@pytest.mark.parametrize(
    ("data", "size", "most", "expected"),
    [
        pytest.param(b"hello", 5, 6, b"hello", id="as-its-status-said"),
        pytest.param(b"hello", 0, 6, b"hello", id="grown-since-its-status"),
        pytest.param(b"x" * 200_000, 10, 300_000, b"x" * 200_000, id="grown-by-more-than-a-read"),
        pytest.param(b"x" * 200_000, 200_000, 100_001, b"x" * 100_001, id="larger-than-the-most-read"),
        pytest.param(b"x" * 200_000, 10, 70_000, b"x" * 70_000, id="grown-past-the-most-read"),
        pytest.param(b"", 0, 6, b"", id="empty"),
    ],
)
def test_reading_up_to_a_limit(tmp_path: Path, data: bytes, size: int, most: int, expected: bytes) -> None:
    """A file's bytes are read as its status gives their size, then on to its end if it grew, never past the
    most asked for (one more than the size limit: what tells a file too large)."""
    from templating.inputs import _read_up_to

    path = tmp_path / "f"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert _read_up_to(fd, size, most) == expected
    finally:
        os.close(fd)


def test_read_bytes_says_a_file_is_too_large_and_reads_a_file_at_the_limit(tmp_path: Path) -> None:
    """The size limit holds whatever the file's status said: a file of `limit` bytes is read, one more is not."""
    from templating.inputs import FileSkipped, read_bytes

    path = tmp_path / "f.py"
    path.write_bytes(b"x" * 100)
    assert read_bytes(str(path), limit=100) == b"x" * 100
    with pytest.raises(FileSkipped, match="more than the limit of 99 bytes"):
        read_bytes(str(path), limit=99)
