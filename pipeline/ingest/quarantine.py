"""A record that cannot be scored, with the reason a person can act on."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class QuarantineCheck(StrEnum):
    """Quarantine checks of audit-output.md, in the order they take precedence."""

    unreadable = "unreadable"
    schema = "schema"
    identifier = "identifier"
    rules = "rules"  # a profile the rules file does not hold, or one of another game
    players = "players"
    card = "card"
    joker = "joker"
    duplicate_card = "duplicate_card"
    setting = "setting"
    duplicate_hand = "duplicate_hand"  # a hand id read before, the record's bytes the same
    conflicting_hand = "conflicting_hand"  # a hand id read before, with other content


@dataclass(frozen=True)
class Quarantined:
    source: str  # file:line, file:row N, or the file alone
    hand_id: str | None
    check: QuarantineCheck
    message: str
    raw: str | None
    digest: str | None = None  # the SHA-256 of the record's bytes (`digests.py`), if any


def raw_text(raw: bytes | str | None, limit: int = 1 << 20) -> str | None:
    """The raw record as text for the quarantine table (undecodable bytes escaped, capped)."""
    if raw is None:
        return None
    text = raw.decode("utf-8", errors="backslashreplace") if isinstance(raw, bytes) else raw
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more)"
