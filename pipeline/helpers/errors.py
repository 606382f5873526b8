"""The errors a user can cause, and the exit codes the command line maps them to."""

from __future__ import annotations

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
