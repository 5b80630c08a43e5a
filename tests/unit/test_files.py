"""The exporter's own files are read without blocking: a FIFO or a directory is refused at once."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from exporter.files import check_regular_file, read_regular_file


def _in_time(call: object) -> BaseException | None:
    """Run `call` in a thread; fail the test if it blocks (as opening a FIFO would)."""
    caught: list[BaseException | None] = [None]

    def run() -> None:
        try:
            call()  # type: ignore[operator]
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            caught[0] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive(), "blocked on the file"
    return caught[0]


def test_reads_a_regular_file_up_to_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100_000)
    assert read_regular_file(str(path), 10) == b"x" * 10
    assert read_regular_file(str(path), 1 << 20) == b"x" * 100_000
    check_regular_file(str(path))


@pytest.mark.parametrize("kind", ["a FIFO", "a directory"])
def test_refuses_what_is_not_a_regular_file_without_blocking(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "config.yaml"
    if kind == "a FIFO":
        os.mkfifo(path)
    else:
        path.mkdir()
    for call in (lambda: read_regular_file(str(path), 10), lambda: check_regular_file(str(path))):
        error = _in_time(call)
        assert isinstance(error, OSError) and error.strerror == f"{kind}, not a regular file"
