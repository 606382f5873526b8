"""No audit lost by accident, through the real command: outputs never over the audit, a
truthful Ctrl-C at every phase, audit.duckdb whole after every command, repeats counted
right, a ledger kept from a plain run, and the sharp edges said in one sentence."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from pipeline.helpers.interrupts import PAUSE_AT, PAUSE_FILE, PHASES, UNCHANGED, WRITTEN
from tests.cli.test_append_command import generated
from tests.cli.test_evaluate_command import handaudit
from tests.conftest import EXAMPLES, ROOT
from tests.property.test_ledger import LINES, split, write_parts

FAULTS = EXAMPLES / "faults" / "hands.jsonl"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _one_sentence(result: subprocess.CompletedProcess[str], *words: str) -> None:
    """Exit 2, one line on stderr holding `words`, and no traceback."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("handaudit: "), result.stderr
    assert all(w in lines[0] for w in words), (words, lines[0])


@pytest.fixture(scope="module")
def days(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return write_parts(tmp_path_factory.mktemp("days"), split(LINES, [20, 40]))


@pytest.fixture
def ledger(days: list[Path], tmp_path: Path) -> Path:
    """An audit built by two appends: its directory."""
    out = tmp_path / "A"
    for day in days[:2]:
        assert handaudit("verify", str(day), "--append", "--out", str(out)).returncode == 1
    return out


# 1. Outputs never over the audit.


@pytest.mark.parametrize(
    "target",
    ["audit.duckdb", "audit.duckdb.wal", ".audit.duckdb.123.partial", "parquet/hands.parquet"],
)
@pytest.mark.parametrize("how", ["csv", "parquet", "fairness", "html"])
def test_no_output_is_written_over_what_the_audit_keeps(
    ledger: Path, target: str, how: str
) -> None:
    (ledger / "parquet").mkdir(exist_ok=True)
    before = {p.name: _digest(p) for p in ledger.iterdir() if p.is_file()}
    db, where = str(ledger / "audit.duckdb"), str(ledger / target)
    args = {
        "csv": ["report", "table_activity", "--format", "csv", "--output", where],
        "parquet": ["report", "player_ledger", "--format", "parquet", "--output", where],
        "fairness": ["report", "fairness", "--format", "json", "--output", where],
        "html": ["report", "audit", "--html", where],
    }[how]
    _one_sentence(handaudit(*args, "--db", db), "belongs to the audit", "nothing was written")
    assert {p.name: _digest(p) for p in ledger.iterdir() if p.is_file()} == before
    assert handaudit("report", "coverage", "--db", db).returncode == 0


def test_any_duckdb_database_and_a_hard_link_to_the_audit_are_refused(
    ledger: Path, tmp_path: Path
) -> None:
    db = ledger / "audit.duckdb"
    other = tmp_path / "other.duckdb"
    duckdb.connect(str(other)).close()
    linked = tmp_path / "linked"
    os.link(db, linked)
    for target, words in ((other, "is a DuckDB database"), (linked, "belongs to the audit")):
        result = handaudit("report", "coverage", "--db", str(db), "--output", str(target))
        _one_sentence(result, str(target), words)
    generated = handaudit("generate", "--tables", "1", "--hands", "2", "--out", str(db))
    _one_sentence(generated, "belongs to the audit")
    assert handaudit("report", "coverage", "--db", str(db)).returncode == 0


def test_targets_that_cannot_be_a_file_are_sentences(ledger: Path, tmp_path: Path) -> None:
    db = str(ledger / "audit.duckdb")
    missing = handaudit("report", "coverage", "--db", db, "--output", str(tmp_path / "no/x.csv"))
    _one_sentence(missing, "does not exist", "nothing was written")
    onto_dir = handaudit("report", "coverage", "--db", db, "--output", str(tmp_path))
    _one_sentence(onto_dir, "is a directory")
    binary = handaudit("report", "coverage", "--db", db, "--format", "parquet", "--output", "-")
    _one_sentence(binary, "binary", "standard output")
    assert not (ROOT / "-").exists()
    text = handaudit("report", "coverage", "--db", db, "--format", "csv", "--output", "-")
    assert text.returncode == 0 and text.stdout.startswith("table_id,")


# 2. A truthful interrupt.


def interrupted_at(out: Path, phase: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`verify` run until it reaches `phase`, paused there, and sent SIGINT."""
    paused = out.parent / f"paused-{phase}"
    env = {**os.environ, PAUSE_AT: phase, PAUSE_FILE: str(paused)}
    run = subprocess.Popen(
        [sys.executable, "-m", "pipeline", "verify", *args, "--out", str(out)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not paused.exists():  # waiting for the process to say it is there
        assert run.poll() is None, run.communicate()
        assert time.monotonic() < deadline, f"never reached {phase}"
        time.sleep(0.01)
    run.send_signal(signal.SIGINT)
    stdout, stderr = run.communicate(timeout=120)
    return subprocess.CompletedProcess(run.args, run.returncode, stdout, stderr)


@pytest.mark.parametrize("append", [False, True], ids=["plain", "append"])
@pytest.mark.parametrize("phase", [p for p in PHASES if p != "cleaning"])
def test_ctrl_c_at_every_phase_says_whether_the_audit_changed(
    days: list[Path], tmp_path: Path, phase: str, append: bool
) -> None:
    out = tmp_path / "A"
    assert handaudit("verify", str(days[0]), "--append", "--out", str(out)).returncode == 1
    before = _digest(out / "audit.duckdb")
    mode = ["--append"] if append else ["--replace"]
    result = interrupted_at(out, phase, str(days[1]), *mode)
    assert result.returncode == 130, result.stderr
    assert "Traceback" not in result.stderr and "Aborted" not in result.stderr
    written = PHASES.index(phase) >= PHASES.index("committing" if append else "printing")
    if not append and phase == "committing":  # held over the swap: done, then told
        written = True
    assert result.stderr.strip().splitlines() == [f"handaudit: {WRITTEN if written else UNCHANGED}"]
    assert [p.name for p in out.iterdir()] == ["audit.duckdb"]  # no log, nothing partial
    with duckdb.connect(str(out / "audit.duckdb"), read_only=True) as con:
        runs = con.execute("SELECT count(*) FROM runs").fetchall()[0][0]
    if written:
        assert runs == (2 if append else 1)
    else:
        assert _digest(out / "audit.duckdb") == before and runs == 1


# 3. The audit file whole after every command; a log a crash left.


def test_after_an_append_the_file_alone_is_the_audit(ledger: Path, tmp_path: Path) -> None:
    assert [p.name for p in ledger.iterdir()] == ["audit.duckdb"]
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(ledger / "audit.duckdb", copy / "audit.duckdb")  # the file alone, mailed
    for db in (ledger, copy):
        shown = handaudit("report", "coverage", "--db", str(db / "audit.duckdb"))
        assert shown.returncode == 0
    with duckdb.connect(str(copy / "audit.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM runs").fetchall()[0][0] == 2


def test_a_log_that_is_not_the_audits_is_refused_with_what_to_do(
    ledger: Path, days: list[Path], tmp_path: Path
) -> None:
    other = tmp_path / "other.duckdb"
    con = duckdb.connect(str(other))
    con.execute("PRAGMA disable_checkpoint_on_shutdown")
    con.execute("CREATE TABLE t AS SELECT 1 AS x")
    con.close()
    shutil.copy(f"{other}.wal", ledger / "audit.duckdb.wal")
    db = str(ledger / "audit.duckdb")
    for result in (
        handaudit("report", "coverage", "--db", db),
        handaudit("explain", "x", "--db", db),
        handaudit("verify", str(days[2]), "--append", "--out", str(ledger)),
        handaudit("verify", str(days[2]), "--out", str(ledger)),
    ):
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert "audit.duckdb.wal is not a log DuckDB can replay" in result.stderr
    replaced = handaudit("verify", str(days[2]), "--replace", "--out", str(ledger))
    assert replaced.returncode == 1 and [p.name for p in ledger.iterdir()] == ["audit.duckdb"]


# 5. Repeats counted right.


def test_a_file_given_twice_is_read_once_in_a_first_append(tmp_path: Path) -> None:
    once = handaudit("verify", str(FAULTS), "--out", str(tmp_path / "once"))
    twice = handaudit(
        "verify", str(FAULTS), str(FAULTS), "--append", "--out", str(tmp_path / "twice")
    )
    assert "files given more than once (the same bytes), read once: 1" in twice.stdout
    assert once.stdout.splitlines()[1:5] == twice.stdout.splitlines()[1:5]


def test_copies_of_audited_hands_and_a_resend_are_counted_once(tmp_path: Path) -> None:
    out = tmp_path / "A"
    assert handaudit("verify", str(FAULTS), "--append", "--out", str(out)).returncode == 1
    lines = FAULTS.read_text().splitlines()
    first = lines[0]
    resend = tmp_path / "resend.jsonl"
    resend.write_text("\n".join([first, first, first, *lines[1:10]]) + "\n")
    with duckdb.connect(str(out / "audit.duckdb"), read_only=True) as con:
        stored = con.execute("SELECT count(*) FROM quarantine").fetchall()[0][0]
    sent = handaudit("verify", str(resend), "--append", "--out", str(out))
    assert "records of hands already audited: 12" in sent.stdout, sent.stdout
    assert "hands diverged            0" in sent.stdout  # no new hand
    again = tmp_path / "resend-again.jsonl"  # other bytes, the same records
    again.write_text(resend.read_text() + "\n")
    resent = handaudit("verify", str(again), "--append", "--out", str(out))
    assert "not stored again: 12" in resent.stdout and resent.returncode == 0, resent.stdout
    with duckdb.connect(str(out / "audit.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM quarantine").fetchall()[0][0] == stored + 12
        sources = con.execute("SELECT DISTINCT source FROM hands").fetchall()
    assert all(Path(s).is_absolute() for (s,) in sources)


# 6. A plain verify into a ledger.


def test_a_plain_verify_does_not_replace_a_ledger_without_replace(
    ledger: Path, days: list[Path]
) -> None:
    before = _digest(ledger / "audit.duckdb")
    refused = handaudit("verify", str(days[2]), "--out", str(ledger))
    _one_sentence(refused, "is a ledger of 2 appended runs (2 files)", "--replace")
    assert _digest(ledger / "audit.duckdb") == before
    both = handaudit("verify", str(days[2]), "--append", "--replace", "--out", str(ledger))
    _one_sentence(both, "give one")
    replaced = handaudit("verify", str(days[2]), "--replace", "--out", str(ledger))
    assert replaced.returncode == 1
    # A plain audit is replaced by a plain run, as before.
    assert handaudit("verify", str(days[1]), "--out", str(ledger)).returncode == 1


# 7. The sharp edges.


def test_sharp_edges_are_one_sentence_each(ledger: Path, tmp_path: Path) -> None:
    db = str(ledger / "audit.duckdb")
    env = {**os.environ, "HANDAUDIT_LOCK_WAIT": "abc"}
    lock_wait = subprocess.run(
        [sys.executable, "-m", "pipeline", "verify", str(FAULTS), "--append", "--out",
         str(ledger)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    _one_sentence(lock_wait, "HANDAUDIT_LOCK_WAIT is a number of seconds", "'abc'")
    other = tmp_path / "other.duckdb"
    duckdb.connect(str(other)).close()
    _one_sentence(handaudit("explain", "x", "--db", str(other)), "not an audit")
    inverted = handaudit(
        "report", "coverage", "--db", db, "--from", "2026-12-10", "--to", "2026-12-01"
    )
    _one_sentence(inverted, "--from 2026-12-10 comes after --to 2026-12-01")
    _one_sentence(handaudit("report", "coverage", "--db", db, "--html", "x.html"), "--html goes")
    _one_sentence(handaudit("report", "coverage", "--db", db, "--alpha", "0.1"), "--alpha goes")
    on_a_file = handaudit("verify", str(FAULTS), "--out", str(FAULTS))
    _one_sentence(on_a_file, "is a file")


def test_a_generated_directory_verifies_without_its_fault_lists(tmp_path: Path) -> None:
    made = tmp_path / "made"
    for name, seed in (("a.jsonl", "1"), ("b.jsonl", "2")):
        generated = handaudit(
            "generate", "--tables", "2", "--hands", "20", "--seed", seed, "--faults", "0.2",
            "--out", str(made / name),
        )  # fmt: skip
        assert generated.returncode == 0, generated.stderr
    assert sorted(p.name for p in made.iterdir()) == [
        "a.jsonl", "a.jsonl.faults.json", "b.jsonl", "b.jsonl.faults.json",
    ]  # fmt: skip
    result = handaudit("verify", str(made), "--out", str(tmp_path / "out"))
    assert result.returncode == 1, result.stderr
    with duckdb.connect(str(tmp_path / "out" / "audit.duckdb"), read_only=True) as con:
        read = con.execute("SELECT DISTINCT unnest(inputs) FROM runs").fetchall()
        sources = con.execute(
            "SELECT DISTINCT source FROM hands UNION SELECT DISTINCT source FROM quarantine"
        ).fetchall()
    assert read == [(str(made),)]
    assert {Path(s.rpartition(":")[0]).name for (s,) in sources} == {"a.jsonl", "b.jsonl"}


# What a hostile reading of the first version found.


def test_deeper_in_the_parquet_tables_and_through_a_link_is_still_the_audit(
    ledger: Path, tmp_path: Path
) -> None:
    db = ledger / "audit.duckdb"
    (ledger / "parquet" / "hands").mkdir(parents=True)
    deep = ledger / "parquet" / "hands" / "part-0.csv"
    _one_sentence(
        handaudit("report", "coverage", "--db", str(db), "--output", str(deep)),
        "belongs to the audit",
    )
    made = handaudit("generate", "--out", str(ledger / "parquet" / "new" / "x.jsonl"))
    _one_sentence(made, "belongs to the audit")
    assert not (ledger / "parquet" / "new").exists()
    link = tmp_path / "link.duckdb"
    link.symlink_to(db)
    beside = handaudit("report", "coverage", "--db", str(link), "--output", f"{link}.wal")
    _one_sentence(beside, "belongs to the audit")


def test_a_device_is_written_to_and_a_directory_is_no_file(ledger: Path, tmp_path: Path) -> None:
    db = str(ledger / "audit.duckdb")
    shown = handaudit(
        "report", "coverage", "--db", db, "--format", "csv", "--output", "/dev/stdout"
    )
    assert shown.returncode == 0 and shown.stdout.startswith("table_id,"), shown.stderr
    assert not Path("/dev/stdout").resolve().is_file()
    _one_sentence(handaudit("generate", "--out", "."), "is a directory")
    _one_sentence(handaudit("explain", "x", "--db", str(ledger)), "is a directory")
    page = handaudit("report", "audit", "--db", db, "--from", "2026-12-10", "--html", "x.html")
    _one_sentence(page, "covers the whole audit")


def test_settings_are_read_by_every_command(ledger: Path, tmp_path: Path) -> None:
    db = str(ledger / "audit.duckdb")
    for name, value, words in (
        ("HANDAUDIT_LOCK_WAIT", "abc", "a number of seconds"),
        ("HANDAUDIT_DUCKDB_MEMORY", "512", "an amount of memory"),
    ):
        env = {**os.environ, name: value}
        for args in (
            ["report", "coverage", "--db", db],
            ["verify", str(FAULTS), "--out", str(tmp_path / "n")],
        ):
            result = subprocess.run(
                [sys.executable, "-m", "pipeline", *args],
                cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
            )  # fmt: skip
            _one_sentence(result, name, words)


def test_a_run_that_fails_or_is_interrupted_early_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "A"
    env = {**os.environ, "HANDAUDIT_DUCKDB_MEMORY": "1KB"}
    starved = subprocess.run(
        [sys.executable, "-m", "pipeline", "verify", str(FAULTS), "--out", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert starved.returncode == 2 and "Traceback" not in starved.stderr, starved.stderr
    assert list(out.iterdir()) == []


def test_a_second_ctrl_c_while_the_run_cleans_up_is_only_counted(
    days: list[Path], tmp_path: Path
) -> None:
    out = tmp_path / "A"
    paused = tmp_path / "paused"
    env = {**os.environ, PAUSE_AT: "inserting,cleaning", PAUSE_FILE: str(paused)}
    run = subprocess.Popen(
        [sys.executable, "-m", "pipeline", "verify", str(days[0]), "--out", str(out)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    for phase in ("inserting", "cleaning"):  # the second Ctrl-C while it cleans up
        while not paused.exists() or paused.read_text() != phase:
            assert run.poll() is None, run.communicate()
            time.sleep(0.01)
        run.send_signal(signal.SIGINT)
    _, stderr = run.communicate(timeout=120)
    assert run.returncode == 130 and stderr.strip().splitlines() == [f"handaudit: {UNCHANGED}"]
    assert list(out.iterdir()) == []


def test_ctrl_c_while_the_command_loads_is_told(tmp_path: Path) -> None:
    paused = tmp_path / "paused"
    env = {**os.environ, PAUSE_AT: "starting", PAUSE_FILE: str(paused)}
    run = subprocess.Popen(
        [sys.executable, "-m", "pipeline", "report", "--list"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    while not paused.exists():
        time.sleep(0.01)
    run.send_signal(signal.SIGINT)
    _, stderr = run.communicate(timeout=120)
    assert run.returncode == 130 and stderr.strip() == f"handaudit: {UNCHANGED}"


@pytest.fixture(scope="module")
def large_day(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Enough hands that DuckDB writes row groups into the audit before the commit."""
    path = tmp_path_factory.mktemp("large") / "day.parquet"
    return generated(
        path, "--tables", "120", "--hands", "200", "--seed", "9", "--format", "parquet"
    )


def test_an_append_stopped_before_its_commit_gives_the_space_back(
    large_day: Path, tmp_path: Path
) -> None:
    out = tmp_path / "A"
    assert handaudit("verify", str(FAULTS), "--out", str(out)).returncode == 1
    size, before = (out / "audit.duckdb").stat().st_size, _digest(out / "audit.duckdb")
    result = interrupted_at(out, "inserting", str(large_day), "--append")
    assert result.returncode == 130 and result.stderr.strip() == f"handaudit: {UNCHANGED}"
    assert [p.name for p in out.iterdir()] == ["audit.duckdb"]
    assert (out / "audit.duckdb").stat().st_size == size  # it had grown by 2 MB
    assert _digest(out / "audit.duckdb") == before


def test_no_output_is_written_over_a_hand_history_the_audit_read(tmp_path: Path) -> None:
    exports = tmp_path / "exports"
    exports.mkdir()
    day = exports / "day.jsonl"
    shutil.copy(FAULTS, day)
    out = tmp_path / "A"
    assert handaudit("verify", str(exports), "--out", str(out)).returncode == 1
    db = str(out / "audit.duckdb")
    for target in (day, exports / "next.jsonl"):  # one it read, one it would read
        report = handaudit(
            "report", "coverage", "--db", db, "--format", "csv", "--output", str(target)
        )
        _one_sentence(report, "is a hand history the audit read", "nothing was written")
    _one_sentence(handaudit("report", "audit", "--db", db, "--html", str(day)), "audit read")
    assert day.read_bytes() == FAULTS.read_bytes() and not (exports / "next.jsonl").exists()
    beside = handaudit("report", "coverage", "--db", db, "--output", str(exports / "c.csv"))
    assert beside.returncode == 0, beside.stderr
