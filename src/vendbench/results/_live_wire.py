"""The live reads' wire: where a results file's socket lives and who may use it, and
the frames (a length, then JSON with dates, decimals and bytes tagged) both ends send."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import socket
import stat
import struct
import tempfile
from decimal import Decimal
from pathlib import Path
from typing import Any

from ..errors import ResultsError

_HEADER = struct.Struct("!I")
MAX_ANSWER_BYTES = 32 << 20      # bytes of one answer, as sent
MAX_MESSAGE = MAX_ANSWER_BYTES + (1 << 20)   # what a reader accepts
_CREDS = struct.Struct("3i")     # SO_PEERCRED: pid, uid, gid


class LiveError(ResultsError):
    """A query the writing process refused or could not run."""


def socket_path(db: str) -> Path:
    """Where the process writing ``db`` answers reads."""
    real = os.path.realpath(db)
    digest = hashlib.sha256(real.encode()).hexdigest()[:20]
    return Path(tempfile.gettempdir()) / f"vendbench-{os.getuid()}" / f"{digest}.sock"


def private_dir(path: Path, create: bool) -> None:
    """Make sure ``path`` is a directory of this user's that no one else can enter (and
    not a link to one): made so if ``create`` and missing; LiveError otherwise. Another
    local user who made it first could otherwise answer in the writer's place."""
    if create:
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise LiveError(f"{path} does not exist") from None
    problem = None
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        problem = "is not a directory"
    elif st.st_uid != os.getuid():
        problem = f"belongs to another user (uid {st.st_uid})"
    elif st.st_mode & 0o077:
        problem = f"can be entered by other users (mode {stat.S_IMODE(st.st_mode):o})"
    if problem:
        raise LiveError(f"live reads refused: {path} {problem}; someone could answer in the "
                        f"writer's place. Remove it (or set TMPDIR elsewhere)")


def _peer(sock: socket.socket) -> tuple[int, int]:
    """The pid and uid of the process at the other end of a Unix socket."""
    pid, uid, _ = _CREDS.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                _CREDS.size))
    return pid, uid


def _encode(value: Any) -> Any:
    if isinstance(value, Decimal):
        return {"$d": str(value)}
    if isinstance(value, dt.datetime):
        return {"$t": value.isoformat()}
    if isinstance(value, dt.date):
        return {"$date": value.isoformat()}
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {"$map": [[_encode(k), _encode(v)] for k, v in value.items()]}
    if isinstance(value, bytes):
        return {"$b": value.hex()}
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if isinstance(value, dict):
        if "$d" in value:
            return Decimal(value["$d"])
        if "$t" in value:
            return dt.datetime.fromisoformat(value["$t"])
        if "$date" in value:
            return dt.date.fromisoformat(value["$date"])
        if "$b" in value:
            return bytes.fromhex(value["$b"])
        return {_decode(k): _decode(v) for k, v in value["$map"]}
    return value


def _send(sock: socket.socket, obj: Any) -> None:
    data = json.dumps(obj, separators=(",", ":")).encode()
    sock.sendall(_HEADER.pack(len(data)) + data)


def _receive(sock: socket.socket, limit: int = MAX_MESSAGE) -> Any:
    head = _read(sock, _HEADER.size)
    (size,) = _HEADER.unpack(head)
    if size > limit:
        raise ConnectionError(f"a message of {size:,} bytes (at most {limit:,} are taken)")
    return json.loads(_read(sock, size))


def _read(sock: socket.socket, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise ConnectionError("the writing process closed the connection")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
