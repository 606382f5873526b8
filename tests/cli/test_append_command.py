"""`verify --append` as a user runs it: the real command in its own process, a real
audit file, and what happens when it is killed, raced, read, refused, or out of disk."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from pipeline.helpers.interrupts import PAUSE_AT, PAUSE_FILE
from pipeline.storage.ledger import writer_lock
from tests.cli.test_evaluate_command import handaudit
from tests.conftest import EXAMPLES, ROOT
from tests.property.test_ledger import LINES, audit_rows, split, write_parts


@pytest.fixture(scope="module")
def days(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return write_parts(tmp_path_factory.mktemp("days"), split(LINES, [20, 40]))


def generated(path: Path, *options: str) -> Path:
    """A history `generate` writes at `path`, with `options`."""
    made = handaudit("generate", *options, "--out", str(path))
    assert made.returncode == 0, made.stderr
    return path


@pytest.fixture(scope="module")
def big_day(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Enough hands that an append takes a few seconds (for killing and racing it)."""
    path = tmp_path_factory.mktemp("big") / "ofc.jsonl"
    return generated(path, "--variant", "ofc", "--tables", "20", "--hands", "200", "--seed", "5")


def _start(*args: str, pause: str = "", paused: Path | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, PAUSE_AT: pause, PAUSE_FILE: str(paused)} if pause else None
    return subprocess.Popen(
        [sys.executable, "-m", "pipeline", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_the_readme_workflow(days: list[Path], tmp_path: Path) -> None:
    out = str(tmp_path / "audit")
    first = handaudit("verify", str(days[0]), "--append", "--out", out)
    assert first.returncode == 1, first.stderr  # the faults of the first day
    second = handaudit("verify", str(days[1]), str(days[2]), "--append", "--out", out)
    assert second.returncode == 1 and "files already audited, skipped: 0" in second.stdout
    assert "the audit now holds" in second.stdout
    again = handaudit("verify", str(days[1]), "--append", "--out", out)
    assert "files already audited, skipped: 1" in again.stdout
    assert "records read              0" in again.stdout
    assert again.returncode == 0  # nothing new: nothing diverged in what it judged
    whole = handaudit("verify", *map(str, days), "--out", str(tmp_path / "one"))
    assert whole.returncode == 1
    assert audit_rows(Path(out) / "audit.duckdb") == audit_rows(tmp_path / "one" / "audit.duckdb")
    coverage = handaudit("report", "coverage", "--db", f"{out}/audit.duckdb")
    assert coverage.returncode == 0 and "players_not_checked" in coverage.stdout


def _killed_at(phase: str, day: Path, out: Path, paused: Path) -> None:
    """An append of `day` into `out`, paused at `phase` and killed there (SIGKILL)."""
    run = _start("verify", str(day), "--append", "--out", str(out), pause=phase, paused=paused)
    deadline = time.monotonic() + 120
    while not paused.exists():  # the process says it is there
        assert run.poll() is None, run.communicate()
        assert time.monotonic() < deadline, f"never reached {phase}"
        time.sleep(0.01)
    run.send_signal(signal.SIGKILL)
    run.wait()
    paused.unlink()


def test_a_killed_append_leaves_the_audit_as_it_was(big_day: Path, tmp_path: Path) -> None:
    """Killed with its rows inserted, the audit is as before. Killed once committed, before
    its checkpoint, the commit is whole in the log beside the audit, and the next append
    folds it in. Killed while the commit was being written, the log is cut short: each cut
    reads as before, and the next append gives the audit after."""
    out, paused = tmp_path / "audit", tmp_path / "paused"
    assert handaudit("verify", str(EXAMPLES / "family/clean/hands.jsonl"), "--out", str(out))
    before = audit_rows(out / "audit.duckdb")
    shutil.copytree(out, tmp_path / "before")
    shutil.copytree(out, tmp_path / "after")
    assert handaudit("verify", str(big_day), "--append", "--out", str(tmp_path / "after"))
    after = audit_rows(tmp_path / "after" / "audit.duckdb")

    _killed_at("inserting", big_day, out, paused)
    assert audit_rows(out / "audit.duckdb") == before

    _killed_at("checkpointing", big_day, out, paused)
    log = out / "audit.duckdb.wal"
    assert audit_rows(out / "audit.duckdb") == after and log.exists()
    size = log.stat().st_size
    for cut in (0, 1, size // 10, size // 2, size - size // 10, size - 1):
        torn = tmp_path / f"torn-{cut}"
        shutil.copytree(out, torn)
        os.truncate(torn / "audit.duckdb.wal", cut)
        assert audit_rows(torn / "audit.duckdb") == before, f"log cut at {cut} of {size}"
        again = handaudit("verify", str(big_day), "--append", "--out", str(torn))
        assert again.returncode in (0, 1), again.stderr
        assert audit_rows(torn / "audit.duckdb") == after
        assert [p.name for p in torn.iterdir()] == ["audit.duckdb"]
        shutil.rmtree(torn)

    folded = handaudit("verify", str(big_day), "--append", "--out", str(out))
    assert "files already audited, skipped: 1" in folded.stdout, folded.stderr
    assert [p.name for p in out.iterdir()] == ["audit.duckdb"]
    assert audit_rows(out / "audit.duckdb") == after


def test_two_appends_at_once_the_second_exits_2_with_a_sentence(
    days: list[Path], tmp_path: Path
) -> None:
    out = tmp_path / "audit"
    assert handaudit("verify", str(days[0]), "--out", str(out)).returncode == 1
    before = audit_rows(out / "audit.duckdb")
    with writer_lock(out):  # as a first append holds it, all its run long
        second = handaudit("verify", str(days[1]), "--append", "--out", str(out))
        plain = handaudit("verify", str(days[1]), "--out", str(out))
    for refused in (second, plain):
        assert refused.returncode == 2 and "Traceback" not in refused.stderr
        assert "Another handaudit run is writing the audit" in refused.stderr
    assert audit_rows(out / "audit.duckdb") == before
    after = handaudit("verify", str(days[1]), "--append", "--out", str(out))
    assert after.returncode == 1 and "the audit now holds" in after.stdout


def test_a_reader_while_the_audit_is_written_gets_a_sentence(
    days: list[Path], tmp_path: Path
) -> None:
    out = tmp_path / "audit"
    assert handaudit("verify", str(days[0]), "--out", str(out)).returncode == 1
    writer = duckdb.connect(str(out / "audit.duckdb"))  # as an append's merge holds it
    try:
        report = handaudit("report", "player_ledger", "--db", str(out / "audit.duckdb"))
        assert report.returncode == 2 and "Traceback" not in report.stderr
        assert "being written by another process" in report.stderr
        env = {**os.environ, "HANDAUDIT_LOCK_WAIT": "1"}
        blocked = subprocess.run(
            [sys.executable, "-m", "pipeline", "verify", str(days[1]), "--append", "--out",
             str(out)],
            cwd=ROOT, capture_output=True, text=True, env=env, timeout=120,
        )  # fmt: skip
        assert blocked.returncode == 2 and "is open in another process" in blocked.stderr
    finally:
        writer.close()
    assert audit_rows(out / "audit.duckdb") == audit_rows(out / "audit.duckdb")


def test_an_audit_of_another_version_is_refused_with_what_to_do(
    days: list[Path], tmp_path: Path
) -> None:
    out = tmp_path / "audit"
    assert handaudit("verify", str(days[0]), "--out", str(out)).returncode == 1
    with duckdb.connect(str(out / "audit.duckdb")) as con:
        con.execute("DROP TABLE audit_info")  # as an audit written before versions were kept
    refused = handaudit("verify", str(days[1]), "--append", "--out", str(out))
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "written by another version of handaudit" in refused.stderr
    assert "without --append" in refused.stderr


def test_the_local_engine_does_not_append_parquet(days: list[Path], tmp_path: Path) -> None:
    parquet = handaudit("verify", str(days[0]), "--append", "--parquet", "--out", str(tmp_path))
    assert parquet.returncode == 2 and "--parquet is not written by --append" in parquet.stderr
    assert not (tmp_path / "audit.duckdb").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small filesystem needs root")
def test_a_full_disk_is_a_sentence_and_the_audit_is_kept(days: list[Path], tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", str(disk)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"no tmpfs here: {mounted.stderr!r}")
    try:
        out = disk / "audit"
        assert handaudit("verify", *map(str, days), "--out", str(out)).returncode == 1
        before = audit_rows(out / "audit.duckdb")
        size = (out / "audit.duckdb").stat().st_size
        sample = ROOT / "fixtures" / "sample" / "jsonl" / "hands.jsonl.gz"
        for extra in (("--replace",), ("--append",)):
            full = handaudit("verify", str(sample), *extra, "--out", str(out))
            assert full.returncode == 2 and "Traceback" not in full.stderr, full.stderr
            assert f"the disk holding {out} is full" in full.stderr
            assert audit_rows(out / "audit.duckdb") == before
            # nothing left behind: no log, no partial file, and the space given back
            assert [p.name for p in out.iterdir()] == ["audit.duckdb"]
            assert (out / "audit.duckdb").stat().st_size == size
    finally:
        subprocess.run(["umount", str(disk)], check=False)
