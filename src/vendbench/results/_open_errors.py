"""Why a results file cannot be opened, in one line with the hint that fits."""

from __future__ import annotations

import os
import re


def _held(exc: BaseException) -> bool:
    """Whether opening failed because another connection holds the file: another
    process's lock, or this process's own connection with other settings."""
    return bool(re.search(r"\b(could not set|conflicting) lock\b|same database file with a "
                          r"different configuration", str(exc), re.I))


def open_error(path: str, exc: BaseException) -> str:
    """One line on why a results file cannot be used, with the hint that fits."""
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if _held(exc):
        return (f"cannot open {path}: another process holds it (a DuckDB shell, or a "
                f"program reading it?); close it, or pass another --db: {first}")
    if "not a valid DuckDB database" in first:
        return f"{path} is not a results database (not a DuckDB file); pass another --db"
    folder = os.path.dirname(os.path.abspath(path))
    if "No such file or directory" in first and not os.path.isdir(folder):
        return f"cannot create {path}: the directory {folder} does not exist; pass another --db"
    for cause in ("Read-only file system", "Permission denied", "No space left on device",
                  "Disk quota exceeded"):
        if cause in first:
            return (f"cannot write {path}: {cause.lower()}; pass a --db where you can write "
                    "(the file itself is not damaged)")
    if not os.path.isfile(path) and "Cannot open file" in first:   # it was being made
        return (f"cannot create {path} ({first}); pass a --db in a directory where you can "
                "write files")
    return (f"{path} cannot be read, it looks damaged ({first}); restore it from a copy, "
            "or pass another --db")


def _kind(path: str) -> str:
    """What a path that is not a regular file is, in words."""
    import stat

    mode = os.stat(path).st_mode
    for test, word in ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return word
    return "not a regular file"
