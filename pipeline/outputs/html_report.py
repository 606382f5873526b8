"""`handaudit report audit --html FILE`: the audit at a glance in one offline HTML file.

Everything is inline (styles, SVG charts drawn here, the explanation of the worst
hands), so the file opens without a network and can be mailed as it is.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pipeline import __version__
from pipeline.helpers.display import cell, is_number
from pipeline.helpers.encoding import N_RANKS, N_STANDARD, card_code
from pipeline.outputs.explain import explain
from pipeline.outputs.reports import ReportError
from pipeline.storage.store import open_audit

RECORDED_COLOR = "#2b6cb0"
RECOMPUTED_COLOR = "#dd6b20"
STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 68em; color: #1a202c; }
h1 { font-size: 1.6em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: .5em 0; } td, th { padding: .2em .8em; }
th { text-align: left; background: #edf2f7; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
tr:nth-child(even) td { background: #f7fafc; }
pre { background: #f7fafc; padding: 1em; overflow-x: auto; }
.ok { color: #276749; } .bad { color: #c53030; } svg.chart { display: block; margin: .5em 0; }
td.flagged { color: #c53030; font-weight: bold; }
"""
# The fairness section's player tests shown beside every deal test: the flagged, and this
# many of the smallest p-values.
PLAYER_TESTS_SHOWN = 10


def _table(header: list[str], rows: list[tuple[Any, ...]], link: int | None = None) -> str:
    out = ["<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>"]
    for row in rows:
        cells = []
        for i, value in enumerate(row):
            text = html.escape(cell(value))
            if link is not None and i == link:
                text = f'<a href="#hand-{text}">{text}</a>'
            cells.append(f'<td class="n">{text}</td>' if is_number(value) else f"<td>{text}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _bars(labels: list[str], series: list[tuple[str, str, list[float]]], title: str) -> str:
    """A vertical bar chart as inline SVG: one group per label, one bar per series."""
    width, height, left, bottom = 760, 300, 70, 80
    top = max((v for _, _, values in series for v in values), default=0) or 1
    group = (width - left - 10) / max(len(labels), 1)
    bar = max(group / (len(series) + 1), 1)
    parts = [
        f'<svg class="chart" role="img" aria-label="{html.escape(title)}" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}">',
        f'<text x="{left}" y="14" font-size="13">{html.escape(title)}</text>',
        f'<line x1="{left}" y1="{height - bottom}" x2="{width - 10}" y2="{height - bottom}" '
        'stroke="#888"/>',
        f'<text x="{left - 6}" y="30" font-size="11" text-anchor="end">{top:,.0f}</text>'
        if float(top).is_integer()
        else f'<text x="{left - 6}" y="30" font-size="11" text-anchor="end">{top:,.2f}</text>',
    ]
    for i, label in enumerate(labels):
        x0 = left + i * group
        for j, (_, color, values) in enumerate(series):
            h = (height - bottom - 30) * values[i] / top
            parts.append(
                f'<rect class="bar" x="{x0 + (j + 0.5) * bar:.1f}" '
                f'y="{height - bottom - h:.1f}" width="{bar:.1f}" height="{h:.1f}" '
                f'fill="{color}"><title>{html.escape(label)}: {values[i]:,.2f}'
                "</title></rect>"
            )
        if len(labels) <= 31 or i % max(len(labels) // 15, 1) == 0:
            x, y = x0 + group / 2, height - bottom + 12
            parts.append(
                f'<text x="{x:.1f}" y="{y}" font-size="10" text-anchor="end" '
                f'transform="rotate(-30 {x:.1f} {y})">{html.escape(label)}</text>'
            )
    for j, (name, color, _) in enumerate(series):
        parts.append(
            f'<rect x="{left + j * 130}" y="{height - 14}" width="10" height="10" '
            f'fill="{color}"/><text x="{left + j * 130 + 14}" y="{height - 5}" '
            f'font-size="11">{html.escape(name)}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts)


@dataclass(frozen=True)
class _Audit:
    """What the report shows, as read from the database."""

    run: tuple[Any, ...]
    by_game: list[tuple[Any, ...]]
    by_check: list[tuple[Any, ...]]
    by_table: list[tuple[Any, ...]]
    rake: list[tuple[Any, ...]]
    quarantine: list[tuple[Any, ...]]
    worst: list[tuple[Any, ...]]


def _read(db: Path, worst: int) -> _Audit:
    with open_audit(db) as con:
        run = con.execute(
            "SELECT inputs, started_at, finished_at, records_read, verified, quarantined, "
            "hands_diverged, divergences, rake_total, recorded_rake_total FROM runs "
            "ORDER BY finished_at DESC LIMIT 1"
        ).fetchone()
        if run is None:
            raise ReportError(f"{db} holds no completed run.")
        return _Audit(
            run,
            con.execute(
                "SELECT h.variant, count(*), count(*) FILTER (WHERE h.status = 'diverged'), "
                "sum(h.rake_total), (SELECT count(*) FROM players p JOIN hands g USING (hand_id) "
                "WHERE g.variant = h.variant AND p.fouled) FROM hands h GROUP BY 1 ORDER BY 1"
            ).fetchall(),
            con.execute(
                'SELECT "check", count(*), count(DISTINCT hand_id) FROM divergences '
                "GROUP BY 1 ORDER BY 2 DESC, 1"
            ).fetchall(),
            con.execute(
                "SELECT h.table_id, string_agg(DISTINCT h.rules, ', ' ORDER BY h.rules), "
                "count(*), count(*) FILTER (WHERE status = 'diverged'), "
                "(SELECT count(*) FROM divergences d WHERE d.table_id = h.table_id) "
                "FROM hands h GROUP BY 1 ORDER BY 1"
            ).fetchall(),
            con.execute(  # recomputed - recorded, as in the run summary
                "WITH r AS (SELECT hand_id, sum(recorded_rake) AS pr FROM players GROUP BY 1) "
                "SELECT day, sum(coalesce(recorded_rake_total, pr)), sum(rake_total) "
                "FROM hands JOIN r USING (hand_id) GROUP BY day ORDER BY day"
            ).fetchall(),
            con.execute(
                'SELECT "check", count(*) FROM quarantine GROUP BY 1 ORDER BY 2 DESC'
            ).fetchall(),
            con.execute(
                "SELECT d.hand_id, any_value(d.table_id), count(*) AS n, "
                "string_agg(DISTINCT d.\"check\", ', ') FROM divergences d "
                "GROUP BY d.hand_id ORDER BY n DESC, d.hand_id LIMIT ?",
                [worst],
            ).fetchall(),
        )


def audit_report(db: Path, worst: int = 15) -> str:
    """The report of the audit in `db`, with the `worst` hands explained, as one page."""
    audit = _read(db, worst)
    explanations = "\n".join(
        f'<h3 id="hand-{html.escape(h[0])}">{html.escape(h[0])}</h3><pre>'
        f"{html.escape(explain(db, h[0]))}</pre>"
        for h in audit.worst
    )
    sections = [_accounting(db, audit), _divergences(audit), _rake(audit.rake)]
    sections += [_rejects_and_worst(audit), _fairness(db), explanations]
    body = "\n".join(sections)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Audit report</title>
<style>{STYLE}</style></head><body>
{body}
</body></html>
"""


def _accounting(db: Path, audit: _Audit) -> str:
    run = audit.run
    inputs, started, finished, read, verified, quarantined, diverged, found, ours, theirs = run
    games = _table(["game", "hands", "hands diverged", "rake", "fouled settings"], audit.by_game)
    same = "=" if read == verified + quarantined else "&ne;"
    summary = _table(
        ["records read", "verified", "quarantined", "hands diverged", "divergences"],
        [(read, verified, quarantined, diverged, found)],
    )
    return f"""<h1>Hand history audit</h1>
<p>Generated {datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC by handaudit {__version__} from
{html.escape(str(db))}; run of {started:%Y-%m-%d %H:%M:%S} to {finished:%H:%M:%S} UTC over
{html.escape(", ".join(inputs))}.</p>
<h2>Accounting</h2>
{summary}
{games}
<p class="{"ok" if same == "=" else "bad"}">Records read {same} verified + quarantined
({read:,} {same} {verified:,} + {quarantined:,}).
Rake recomputed {ours}, recorded {theirs},
recomputed - recorded {ours - theirs}.</p>"""


def _divergences(audit: _Audit) -> str:
    by_check = audit.by_check
    chart = _bars(
        [c for c, _, _ in by_check],
        [("divergences", RECORDED_COLOR, [float(n) for _, n, _ in by_check])],
        "Divergences by check",
    )
    return f"""<h2>Divergences by check</h2>
{chart if by_check else "<p>No divergence.</p>"}
{_table(["check", "divergences", "hands"], by_check) if by_check else ""}
<h2>Divergences by table</h2>
<p>Each table's hands were audited under the house rules named (house-rules.md;
<code>standard</code>: the contract as written; <code>handaudit report rules</code> says
which hands under which).</p>
{_table(["table", "rules", "hands", "hands diverged", "divergences"], audit.by_table)}"""


def _rake(rake: list[tuple[Any, ...]]) -> str:
    chart = _bars(
        [str(d) for d, _, _ in rake],
        [
            ("recorded", RECORDED_COLOR, [float(r) for _, r, _ in rake]),
            ("recomputed", RECOMPUTED_COLOR, [float(c) for _, _, c in rake]),
        ],
        "Rake per UTC day: recorded and recomputed",
    )
    rows = [(d, r, c, c - r) for d, r, c in rake]
    header = ["day", "recorded", "recomputed", "recomputed - recorded"]
    return f"<h2>Rake reconciliation by day</h2>\n{chart}\n{_table(header, rows)}"


def _rejects_and_worst(audit: _Audit) -> str:
    quarantine = (
        _table(["check", "records"], audit.quarantine)
        if audit.quarantine
        else "<p>Nothing quarantined.</p>"
    )
    worst = (
        _table(["hand", "table", "divergences", "checks"], audit.worst, link=0)
        if audit.worst
        else "<p>No hand diverged.</p>"
    )
    return f"<h2>Quarantine</h2>\n{quarantine}\n<h2>Worst hands</h2>\n{worst}"


def _fairness(db: Path) -> str:
    """The deal fairness report: a card-by-seat heat map per game, and its tests."""
    from pipeline.outputs.dealt import dealt_by_game
    from pipeline.outputs.fairness import PREMIUM, card_grid, read_counts, report_of
    from pipeline.outputs.reports import Filters

    counts, covered = read_counts(db, Filters())
    result = report_of(counts, Filters(), 0.01, covered)
    rows = result.rows.to_pylist()
    deal = [r for r in rows if not r["test"].startswith(PREMIUM)]
    players = sorted(
        (r for r in rows if r["test"].startswith(PREMIUM) and r["p_value"] is not None),
        key=lambda r: (not r["flagged"], r["p_value"]),
    )
    shown = [r for i, r in enumerate(players) if r["flagged"] or i < PLAYER_TESTS_SHOWN]
    columns = ["test", "scope", "hands", "cards", "statistic", "df", "p_value", "verdict"]
    table = _table(
        [*columns, "detail"], [tuple(r[c] for c in [*columns, "detail"]) for r in deal + shown]
    ).replace("<td>FLAGGED</td>", '<td class="flagged">FLAGGED</td>')
    more = len(players) - len(shown)
    maps = "\n".join(
        _heat_map(d.game.name, d.labels[:-1], *card_grid(d))
        for d in dealt_by_game(counts.cuts, counts.cards, counts.by_player)
    )
    return f"""<h2>Deal fairness</h2>
<p>{html.escape(result.headline())}. {html.escape(result.spec.notes)}</p>
{maps}
{table}
{
        f"<p>{more:,} more player tests, none flagged: <code>handaudit report fairness</code>.</p>"
        if more
        else ""
    }"""


def _heat_map(game: str, groups: list[str], observed: Any, expected: Any, z: Any) -> str:
    """Each group's count of each card against what a fair deal expects, as inline SVG:
    red where a group got a card more often, blue less, by standard deviations (4+ full)."""
    from pipeline.core.cards import CANONICAL
    from pipeline.outputs.fairness_rows import SUITS

    size, left, top = 13, 110, 30
    width, height = left + N_STANDARD * size + 10, top + len(groups) * size + 40
    title = f"{game}: each card dealt to each group, against a fair deal"
    parts = [
        f'<svg class="chart" role="img" aria-label="{html.escape(title)}" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}">',
        f'<text x="{left}" y="14" font-size="13">{html.escape(title)}</text>',
    ]
    for g, group in enumerate(groups):
        y = top + g * size
        parts.append(
            f'<text x="{left - 6}" y="{y + size - 3}" font-size="11" text-anchor="end">'
            f"{html.escape(group)}</text>"
        )
        for column in range(N_STANDARD):
            c = card_code(column % N_RANKS, column // N_RANKS)  # suit by suit, 2 to A in each
            shade = min(abs(float(z[g, c])) / 4, 1.0)
            light = int(255 * (1 - shade))
            rgb = (255, light, light) if z[g, c] > 0 else (light, light, 255)
            parts.append(
                f'<rect x="{left + column * size}" y="{y}" width="{size - 1}" '
                f'height="{size - 1}" fill="rgb{rgb}"><title>{html.escape(group)} '
                f"{CANONICAL[c]}: {observed[g, c]:,.0f} dealt, {expected[g, c]:,.1f} "
                f"expected ({z[g, c]:+.1f} sd)</title></rect>"
            )
    for s, suit in enumerate(SUITS):
        x = left + (s * 13 + 6.5) * size
        parts.append(
            f'<text x="{x}" y="{top + len(groups) * size + 12}" font-size="10" '
            f'text-anchor="middle">{suit} 2 to A</text>'
        )
    parts.append(
        f'<text x="{left}" y="{height - 6}" font-size="11">red: dealt more often than a fair '
        "deal expects, blue: less (full colour at 4 standard deviations)</text></svg>"
    )
    return "\n".join(parts)
