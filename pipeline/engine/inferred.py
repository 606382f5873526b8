"""What `rules infer` found, for people (a table per table and segment, the changes) and
as a rules file (house-rules.md 1) that maps each table to the profile it fits."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pipeline.core.readings import entry_table
from pipeline.core.rules import STANDARD, Profile, RuleBook
from pipeline.engine.infer import Change, Segment, Tables, flat_values, told_between
from pipeline.engine.pool import Pool
from pipeline.outputs.text_table import text_table


def when(micros: int) -> str:
    """A time of the hands, as RFC 3339 in UTC."""
    moment = datetime.fromtimestamp(micros / 1_000_000, tz=UTC)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def values_text(profile: Profile) -> str:
    """A candidate's values that differ from the contract's, `key=value; ...`; a table
    by its size (the rules file written holds it whole)."""
    return "; ".join(f"{k}={_brief(v)}" for k, v in profile.values.items()) or STANDARD


def _brief(value: Any) -> str:
    if not isinstance(value, dict):
        return _compact(value)
    entries = sum(len(v) if isinstance(v, dict) else 1 for v in value.values())
    return f"<{entries} entries>"


def _compact(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


@dataclass(frozen=True)
class Names:
    """What each fitting candidate is called: the rules file's name for one of its
    profiles, `standard` for the contract, the name the hands give it where they all
    give one, else `inferred_N`."""

    by_digest: dict[str, str]
    house: dict[str, str] = field(default_factory=dict)  # the rules file's, by digest
    filed: dict[str, Profile] = field(default_factory=dict)  # the rules file's, by name

    def shown(self, profile: Profile) -> str:
        """The name, with the values unless the rules file gives them under it."""
        name, values = self(profile), values_text(profile)
        if name in (values, self.house.get(profile.digest)):
            return name
        return f"{name} ({values})"

    @classmethod
    def of(cls, pool: Pool, segments: list[Segment], book: RuleBook | None) -> Names:
        by_digest: dict[str, str] = {}
        house = {p.digest: p.name for p in book.house} if book is not None else {}
        taken: set[str] = {STANDARD}
        given: dict[str, Counter[str]] = {}  # name -> the profiles its hands fit
        for segment in segments:  # the hands' own name first: under it they are audited
            for name, n in Counter(pool.named[int(h)] for h in segment.hands).items():
                if name and name != STANDARD and 2 * n >= len(segment.hands):  # most name it
                    given.setdefault(name, Counter())[segment.profile.digest] += n
        for name, fits in sorted(given.items(), key=lambda kv: -sum(kv[1].values())):
            for digest, _ in fits.most_common():
                if digest not in by_digest and name not in taken:
                    by_digest[digest] = name
                    taken.add(name)
        for segment in segments:
            profile = segment.profile
            if profile.digest in by_digest:
                continue
            name = house.get(profile.digest) or (None if profile.values else STANDARD)
            k = 1
            while name is None or (name in taken and name != STANDARD):
                name = f"inferred_{k}"
                k += 1
            by_digest[profile.digest] = name
            taken.add(name)
        return cls(by_digest, house, {p.name: p for p in book.house} if book else {})

    def unlike_the_file(self, segments: list[Segment]) -> list[str]:
        """A sentence per profile named as one of the rules file's (by the hands that
        name it) whose values the hands do not fit: what they fit instead."""
        out = []
        for profile in {s.profile.digest: s.profile for s in segments}.values():
            name = self(profile)
            filed = self.filed.get(name)
            if filed is None or filed.digest == profile.digest:
                continue
            keys = set(filed.values) | set(profile.values)
            theirs, mine = flat_values(filed, keys), flat_values(profile, keys)
            differ = [
                f"{k} {_compact(theirs.get(k, 'none'))} -> {_compact(mine.get(k, 'none'))}"
                for k in sorted(set(theirs) | set(mine))
                if theirs.get(k) != mine.get(k)
            ]
            out.append(
                f"profile {name}: its hands fit values other than the rules file's {name}, "
                f"and are written as they fit: {', '.join(differ)}"
            )
        return out

    def __call__(self, profile: Profile) -> str:
        return self.by_digest.get(profile.digest, values_text(profile))


SHOWN_ENTRIES = 3  # a table's undetermined entries named; more are counted


def undetermined_text(keys: tuple[str, ...], entries: tuple[str, ...]) -> str:
    """The keys no hand told apart, a table's entries beside it: `surrender, naturals
    (dragon, pure_dragon), royalties (5 entries)`; a table without entries named is one
    that no record showed."""
    parts = []
    for key in keys:
        mine = [e.split(".", 1)[1] for e in entries if e.split(".", 1)[0] == key]
        if not mine:
            parts.append(key)
        elif len(mine) <= SHOWN_ENTRIES:
            parts.append(f"{key} ({', '.join(mine)})")
        else:
            parts.append(f"{key} ({len(mine)} entries)")
    return ", ".join(parts) or "none"


HEADER = [
    "table_id",
    "first",
    "last",
    "from",
    "until",
    "hands",
    "rules",
    "exact",
    "next_best",
    "evidence",
    "undetermined",
]


def report(pool: Pool, found: Tables, names: Names) -> str:
    """One row per table and segment, then the changes of rules."""
    segments, changes = found.segments, found.changes
    if not segments:
        why = ", ".join(f"{n:,} {check}" for check, n in sorted(pool.quarantined.items()))
        return "No hand was verified: there are no tables to read rules from" + (
            f" (quarantined: {why})." if why else "."
        )
    text = text_table(HEADER, _rows(pool, found, names))
    if changes:
        text += "\n\nRule changes:\n" + "\n".join(_change(pool, c, names) for c in changes)
    unlike = names.unlike_the_file(segments)
    if unlike:
        text += "\n\n" + "\n".join(unlike)
    unexplained = sum(len(s.hands) - s.fit.exact for s in segments)
    if unexplained:
        text += (
            f"\n\n{unexplained:,} hands fit none of the candidates: findings, not rules. "
            "Verify with the rules written (--write) to see each divergence."
        )
    if pool.quarantined:
        why = ", ".join(f"{n:,} {check}" for check, n in sorted(pool.quarantined.items()))
        text += f"\n\nQuarantined before any rules were tried: {why}."
    return text


def _rows(pool: Pool, found: Tables, names: Names) -> list[list[object]]:
    """The report's row of each segment (`HEADER`)."""
    segments = found.segments
    nexts = [s.fit.next_best() for s in segments]
    # The next best of each was scored where it differs from the best; it is scored on
    # every hand of its segment here, all of them in few passes.
    pool.score_each([(nxt[0], s.hands) for s, nxt in zip(segments, nexts, strict=True) if nxt])
    rows: list[list[object]] = []
    for s, nxt in zip(segments, nexts, strict=True):
        first, last = int(s.hands[0]), int(s.hands[-1])
        exact = found.exact(s.profile, s.hands)
        other = found.exact(nxt[0], s.hands) if nxt else exact & False
        rows.append(
            [
                s.table_id,
                pool.hand_no[first],
                pool.hand_no[last],
                when(pool.started_at[first]),
                when(pool.started_at[last]),
                len(s.hands),
                names.shown(s.profile),
                int(exact.sum()),
                f"{names(nxt[0])}: {nxt[1]}" if nxt else "none",
                int((exact & ~other).sum()),
                undetermined_text(s.fit.undetermined, s.fit.entries),
            ]
        )
    return rows


def _change(pool: Pool, change: Change, names: Names) -> str:
    last, first = change.last, change.first
    old, new = change.before.profile, change.after.profile
    keys = set(old.values) | set(new.values)
    before, after = flat_values(old, keys), flat_values(new, keys)
    differ = [k for k in sorted(set(before) | set(after)) if before.get(k) != after.get(k)]
    told = [k for k in differ if told_between(change.before, change.after, k)]
    changed = [
        f"{k} {_compact(before.get(k, 'none'))} -> {_compact(after.get(k, 'none'))}" for k in told
    ]
    untold = [k for k in differ if k not in told]
    if untold:  # written apart, but some side's hands do not tell them
        shown = ", ".join(untold[:SHOWN_ENTRIES]) + (
            f" and {len(untold) - SHOWN_ENTRIES} more" if len(untold) > SHOWN_ENTRIES else ""
        )
        changed.append(f"(not told apart by one side's hands: {shown})")
    between = [pool.hand_no[int(h)] for h in change.between]
    undecided = (  # the change happened somewhere among them
        f"; hand {between[0]} between does not tell the two apart"
        if len(between) == 1
        else f"; hands {between[0]} to {between[-1]} between do not tell the two apart"
        if between
        else ""
    )
    return (
        f"table {change.table_id}: {names(old)} until hand {pool.hand_no[last]} "
        f"({when(pool.started_at[last])}), {names(new)} from hand {pool.hand_no[first]} "
        f"({when(pool.started_at[first])}){undecided}; changed: {', '.join(changed)}"
    )


def rules_file(pool: Pool, segments: list[Segment], names: Names) -> str:
    """A rules file: each fitting profile, and an entry per table and segment, with
    `from` and `until` where a table changed its rules."""
    lines = ["# Written by handaudit rules infer: the profiles the tables' hands fit.", ""]
    written: set[str] = set()
    for s in segments:
        name = names(s.profile)
        if name == STANDARD or name in written:
            continue
        written.add(name)
        lines += [*profile_lines(name, s.profile), ""]
    # A table's `standard` entries after its others: `standard` is any game's contract,
    # so an entry naming it would take the hands of the table's other games (a profile's
    # entry takes only its game's); its own game's hands reach it past the others, whose
    # times do not cover them.
    order = sorted(range(len(segments)), key=lambda i: (
        segments[i].table_id, names(segments[i].profile) == STANDARD))  # fmt: skip
    for i in order:
        s = segments[i]
        lines.append("[[tables]]")
        lines.append(f"match = {_toml(_glob_escape(s.table_id))}")
        lines.append(f"profile = {_toml(names(s.profile))}")
        before = segments[i - 1] if i else None
        after = segments[i + 1] if i + 1 < len(segments) else None
        if before is not None and _same(before, s):
            lines.append(f"from = {_toml(when(pool.started_at[int(s.hands[0])]))}")
        if after is not None and _same(after, s):
            lines.append(f"until = {_toml(when(pool.started_at[int(after.hands[0])]))}")
        lines.append("")
    return "\n".join(lines)


def profile_lines(name: str, profile: Profile) -> list[str]:
    """`profile` as a rules file's profile `name`, as it is scored: a Fantasyland table of
    entry cards holds every top from the entry up (a search that lowers an entry leaves
    the table as it was, whose lowest count the tops below then deal)."""
    values = dict(profile.values)
    land = values.get("fantasyland")
    if isinstance(land, dict) and isinstance(land.get("entry_cards"), dict):
        values["fantasyland"] = {**land, "entry_cards": entry_table(profile)}
    lines = [f"[profiles.{_key(name)}]", f'game = "{profile.variant.name}"']
    return lines + [f"{_key(k)} = {_toml(v)}" for k, v in values.items()]


def _same(a: Segment, b: Segment) -> bool:
    """Two segments of one table and game: a change of rules between them."""
    return (a.table_id, a.profile.game) == (b.table_id, b.profile.game)


def _glob_escape(table_id: str) -> str:
    """A glob that matches `table_id` alone (fnmatch's special characters bracketed)."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in table_id)


def _key(name: str) -> str:
    bare = name and all(c.isascii() and (c.isalnum() or c in "_-") for c in name)
    return name if bare else _string(name)


def _string(text: str) -> str:
    """`text` as a TOML basic string: as it is, but for what TOML has escaped (a quote, a
    backslash, the controls). JSON's ASCII escapes would not do: a character beyond
    the Basic Multilingual Plane becomes two surrogates, which TOML refuses."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, int):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"a rules file holds no {type(value).__name__}")
