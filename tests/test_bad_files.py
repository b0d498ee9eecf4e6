"""Damaged results files, bad panel files and bad flags: one line, exit 2, never a
traceback (issue: "Bad files and flags")."""

from __future__ import annotations

import os
import random
import re
import shutil

import subprocess

import pytest

from vendbench.cli import main

CORRUPTIONS = ["empty", "text", "random", "directory", *(f"truncate-{f}" for f in
               (0.02, 0.1, 0.3, 0.5, 0.7, 0.95)), *(f"flip-{i}" for i in range(12))]


@pytest.fixture(scope="module")
def good_db(tmp_path_factory):
    db = str(tmp_path_factory.mktemp("good") / "r.duckdb")
    assert main(["run", "--models", "baseline/order-up-to", "--days", "3", "--db", db,
                 "--json"]) == 0
    return db


def corrupt(good: str, path: str, how: str) -> None:
    rng = random.Random(how)
    if how == "directory":
        os.mkdir(path)
        return
    if how == "empty":
        open(path, "wb").close()
        return
    if how == "text":
        open(path, "w").write("run_id,model\n1,openai/x\n")
        return
    if how == "random":
        open(path, "wb").write(bytes(rng.randrange(256) for _ in range(300_000)))
        return
    shutil.copy(good, path)
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        if how.startswith("truncate"):
            f.truncate(int(size * float(how.split("-")[1])))
        else:                                         # overwrite 256 bytes somewhere
            f.seek(rng.randrange(0, size - 256))
            f.write(bytes(rng.randrange(256) for _ in range(256)))


# damage that no reader can miss (the rest may hit bytes nothing reads)
DETECTED = {"empty", "text", "random", "directory", "truncate-0.02", "truncate-0.1",
            "truncate-0.3", "truncate-0.5"}


@pytest.mark.parametrize("how", CORRUPTIONS)
def test_a_damaged_results_file_is_one_clear_line(good_db, tmp_path, capsys, how):
    path = str(tmp_path / f"{how}.duckdb")
    corrupt(good_db, path, how)
    for command in (["runs"], ["runs", "--run", "latest"], ["leaderboard", "--format", "json"],
                    ["run", "--resume", "latest"]):
        code = main([*command, "--db", path])
        out, err = capsys.readouterr()
        assert "Traceback" not in err
        if code == 0:            # damage in bytes nothing reads: the answer is still whole
            assert how not in DETECTED, (how, command)
            continue
        # the error in one line; before it at most the resume's own progress line, when
        # the damaged block is first read after the run has started (its ceilings, say)
        *before, last = err.strip().splitlines()
        assert code == 2 and last.startswith("vendbench: error: "), (how, command, err)
        assert all(re.fullmatch(r"run \S+: \d+ trials? to run.*", line) for line in before), err
        assert "Traceback" not in err
        assert "still writing" not in err                # no lock is involved here


def test_the_lock_hint_only_when_a_lock_is_the_cause():
    import duckdb

    from vendbench.results import open_error

    lock = duckdb.IOException('IO Error: Could not set lock on file "r.duckdb": Conflicting '
                              "lock is held in python (PID 12)")
    assert "another process holds it" in open_error("r.duckdb", lock)
    block = duckdb.Error("Corrupt database file: checksum mismatch in block at location 12")
    assert "holds it" not in open_error("r.duckdb", block) and "damaged" in \
        open_error("r.duckdb", block)


@pytest.mark.parametrize("content,message", [
    (None, "is a directory"),
    (b'name = "x"\n\xff\xfe\n', "not UTF-8"),
    (b"days = 2\n[[models]]\nid = 'openai/x'\ninput_usd_per_mtok = nan\n"
     b"output_usd_per_mtok = 1\n", "finite"),
    (b"days = 2\nbudget_usd = inf\n[[models]]\nid = 'baseline/oracle'\n", "finite"),
    (b"days = 2\n[[models]]\nid = 'openai/x'\nrequest_timeout_s = inf\n", "86400"),
    (b"days = 2\nseeds = [3000000000]\n[[models]]\nid = 'baseline/oracle'\n", "32-bit"),
    (b"days = [\n", "not valid TOML"),
])
def test_bad_panel_files_are_one_clear_line(tmp_path, capsys, content, message):
    panel = tmp_path / "panel.toml"
    if content is None:
        panel.mkdir()
    else:
        panel.write_bytes(content)
    code = main(["run", "--panel", str(panel), "--db", str(tmp_path / "r.duckdb")])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err, err
    assert not (tmp_path / "r.duckdb").exists()


@pytest.mark.parametrize("args,message", [
    (["--seeds", "3000000000"], "a seed is 0-2,147,483,647"),
    (["--price", "openai/x=nan,1"], "finite"),
    (["--price", "openai/x=1,inf"], "finite"),
    (["--budget", "nan"], "positive amount"),
    (["--timeout", "inf"], "seconds above 0"),
])
def test_bad_flags_are_a_clear_error(tmp_path, capsys, args, message):
    try:
        code = main(["run", "--models", "openai/x", "baseline/oracle", *args, "--db",
                     str(tmp_path / "r.duckdb")])
    except SystemExit as exc:           # argparse's own check: usage, then the error
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err, err
    assert not (tmp_path / "r.duckdb").exists()


def test_a_missing_directory_or_a_read_only_filesystem_is_not_called_damaged(tmp_path,
                                                                            capsys):
    """Neither is a damaged file: the error says what is wrong, and nothing is lost."""
    missing = str(tmp_path / "no" / "such" / "dir" / "x.duckdb")
    for command in (["run", "--models", "baseline/order-up-to", "--days", "1"],
                    ["serve"]):
        assert main([*command, "--db", missing]) == 2
        err = capsys.readouterr().err
        assert "does not exist" in err and "looks damaged" not in err, err
    readonly = tmp_path / "ro"
    readonly.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,ro", "tmpfs",
                              str(readonly)], capture_output=True).returncode == 0
    if not mounted:                       # not root: a directory this user cannot write
        readonly.chmod(0o555)
    try:
        assert main(["run", "--models", "baseline/order-up-to", "--days", "1", "--db",
                     str(readonly / "x.duckdb")]) == 2
        err = capsys.readouterr().err
        assert ("read-only file system" in err if mounted else "permission denied" in err)
        assert "looks damaged" not in err and "restore it from a copy" not in err
    finally:
        if mounted:
            subprocess.run(["umount", str(readonly)], check=True)
        readonly.chmod(0o755)


@pytest.mark.parametrize("command", [["runs"], ["leaderboard"], ["view"],
                                     ["run", "--models", "baseline/oracle", "--days", "1"]])
def test_a_db_that_is_not_a_regular_file_is_refused_at_once(tmp_path, capsys, command):
    """A named pipe as --db used to hang (deaf to SIGINT and SIGTERM), /dev/null to be
    called damaged: --db takes a regular file."""
    fifo = tmp_path / "pipe.duckdb"
    os.mkfifo(fifo)
    for path, kind in ((str(fifo), "a named pipe"), ("/dev/null", "a character device")):
        assert main([*command, "--db", path]) == 2
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert f"is not a regular file ({kind})" in line and "damaged" not in line


def test_a_panel_that_is_not_a_small_regular_file_is_refused(tmp_path, capsys):
    """``--panel /dev/zero`` used to read without end."""
    fifo = tmp_path / "panel.toml"
    os.mkfifo(fifo)
    big = tmp_path / "big.toml"
    big.write_text("# " + "x" * (1 << 20) + "\n")
    for panel, message in (("/dev/zero", "not a regular file"), (str(fifo), "not a regular "
                           "file"), (str(big), "a panel is at most 1,048,576")):
        for command in ("run", "check"):
            assert main([command, "--panel", panel]) == 2
            (line,) = capsys.readouterr().err.strip().splitlines()
            assert message in line


def test_a_place_where_no_file_can_be_made_is_not_called_damaged(capsys):
    assert main(["run", "--models", "baseline/oracle", "--days", "1", "--db",
                 "/proc/vendbench-test.duckdb"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "cannot create /proc/vendbench-test.duckdb" in line and "damaged" not in line


@pytest.mark.parametrize("share", [0.7, 0.95])
def test_a_run_on_a_file_cut_short_refuses_before_it_starts(good_db, tmp_path, capsys,
                                                           share):
    """A file cut short past its last read block opened fine; the run started and then
    failed, advising a resume that could not work. It is refused first, with what to do."""
    path = str(tmp_path / "cut.duckdb")
    shutil.copy(good_db, path)
    with open(path, "r+b") as f:
        f.truncate(int(os.path.getsize(good_db) * share))
    assert main(["run", "--models", "baseline/oracle", "--days", "1", "--db", path]) == 2
    out, err = capsys.readouterr()
    (line,) = err.strip().splitlines()
    assert "is cut short" in line and "restore it from a copy" in line
    assert "--resume" not in line and "to run" not in out + err
