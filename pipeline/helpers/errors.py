"""The errors a user can cause, and the exit codes the command line maps them to."""

from __future__ import annotations

import errno
from enum import IntEnum


class ExitCode(IntEnum):
    """What `handaudit` tells the shell."""

    CLEAN = 0
    FINDINGS = 1
    COULD_NOT_RUN = 2
    INTERRUPTED = 130  # the shell's code for a run stopped by Ctrl-C


class AuditError(Exception):
    """Base of every error whose message is meant for the user, not a traceback."""

    exit_code: ExitCode = ExitCode.COULD_NOT_RUN


class CardError(AuditError, ValueError):
    """A card text that rules.md section 1 does not accept."""

    def __init__(self, card: object, where: str) -> None:
        self.card = card
        self.where = where
        super().__init__(
            f"The card {card!r} at {where} is not a card: expected a rank of "
            f"23456789TJQKA (or 10) followed by a suit of cdhs, or JK for a joker."
        )


# What the file system's refusals mean, for a sentence that names the path.
_ERRNO_WORDS = {
    errno.ENOENT: "does not exist (nor does a directory on its way)",
    errno.EEXIST: "already exists",
    errno.EISDIR: "is a directory, not a file",
    errno.ENOTDIR: "is not a directory (a file stands on its way)",
    errno.EACCES: "may not be read or written by this user",
    errno.EPERM: "may not be read or written by this user",
    errno.ENOSPC: "cannot be written: the disk is full",
    errno.EROFS: "is on a read-only file system",
    errno.ENAMETOOLONG: "has too long a name",
}


def os_sentence(error: OSError) -> str:
    """A file system error in words, naming the path: `/a/b is a directory, not a file`
    rather than `[Errno 21] Is a directory: '/a/b'`."""
    words = _ERRNO_WORDS.get(error.errno or 0) or (error.strerror or str(error)).lower()
    where = error.filename
    if where is None:
        return f"A file could not be read or written: {words}"
    if error.filename2 is not None:
        return f"{where} could not be moved to {error.filename2}: {words}"
    return f"{where} {words}"
