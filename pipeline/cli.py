"""The `handaudit` command line: parse options, call one function, map errors to exit codes."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeAlias

import duckdb
import typer
from typer.core import TyperCommand, TyperGroup

from pipeline.core.games import TAIWANESE_JOKERS, VARIANTS
from pipeline.core.games.chinese import Scoring
from pipeline.generate.shuffle import Bias, Dealer, dealer_for, parse_bias
from pipeline.helpers import interrupts
from pipeline.helpers.choices import HistoryFormat, ReportFormat
from pipeline.helpers.display import for_terminal
from pipeline.helpers.errors import AuditError, ExitCode, os_sentence
from pipeline.helpers.memory import keep_freed_memory

if TYPE_CHECKING:
    from pipeline.engine.run import RunSummary
    from pipeline.outputs.reports import ReportSpec

HELP = (
    "Audit hand histories of Taiwanese Poker, Taiwanese Jokers, closed Chinese Poker, "
    "Open-Face Chinese and Pineapple: re-evaluate, re-settle, flag every divergence."
)


class _Flags:
    """Help that shows a flag as a flag: Typer would print `--help <bool>`, as if it took
    a value."""

    def get_params(self, ctx: Any) -> Any:
        params = super().get_params(ctx)  # type: ignore[misc]
        for param in params:
            if getattr(param, "is_flag", False):
                param.metavar = ""
        return params


class _Group(_Flags, TyperGroup):
    pass


class _Command(_Flags, TyperCommand):
    pass


app = typer.Typer(
    name="handaudit",
    cls=_Group,
    help=HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
command = app.command


@contextmanager
def exit_codes(after: str = "") -> Iterator[None]:
    """The one mapping of errors to exit codes, with words on stderr, never a traceback.

    `after` says what a failure left behind (such as an audit left unchanged). Once a
    Ctrl-C was received, whatever it made fail (a DuckDB statement stops with an error
    of its own) is the interrupt, told by what it did to the audit (`interrupts`).
    """
    try:
        yield
    except BaseException as error:
        if interrupts.received() or isinstance(error, KeyboardInterrupt):
            _fail(interrupts.sentence(), ExitCode.INTERRUPTED)
        if isinstance(error, AuditError):
            _fail(str(error), error.exit_code)
        if isinstance(error, OSError):  # a file that cannot be read or written
            _fail(f"{os_sentence(error)}{after}", ExitCode.COULD_NOT_RUN)
        if isinstance(error, duckdb.IOException):
            _fail(f"{error}{after}", ExitCode.COULD_NOT_RUN)
        raise


def _fail(message: str, code: ExitCode) -> None:
    if code is not ExitCode.INTERRUPTED or interrupts.tell():
        say(f"handaudit: {message}", err=True)
    raise typer.Exit(int(code)) from None


def say(text: str, *, err: bool = False, nl: bool = True) -> None:
    """Words for a person: what input text they quote is shown visibly (`display`)."""
    typer.echo(for_terminal(text), err=err, nl=nl)


@app.callback(invoke_without_command=True)
def handaudit(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False,
) -> None:
    """Audit Taiwanese Poker hand histories: re-evaluate, re-settle, flag every divergence."""
    from pipeline.helpers import settings

    with exit_codes():
        settings.check()
    if version:
        from pipeline import __version__

        typer.echo(f"handaudit {__version__}")
        raise typer.Exit(0)
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())


@command("evaluate", cls=_Command)
def evaluate_command(
    hands: Annotated[Path, typer.Argument(metavar="FILE", help="A JSON Lines file of hands.")],
    limit: Annotated[int, typer.Option(metavar="N", help="Show at most this many hands.")] = 5,
) -> None:
    """Evaluate every row of every player on both boards, beside the recorded values."""
    from pipeline.engine.evaluate_file import evaluate_file
    from pipeline.engine.table_cache import cached_tables

    with exit_codes(), cached_tables():
        report = evaluate_file(hands, limit=limit)
    say(report.text)
    raise typer.Exit(int(ExitCode.CLEAN if report.agree else ExitCode.FINDINGS))


class Engine(StrEnum):
    local = "local"
    spark = "spark"


# The options of `verify` that take many words to say.
DEFAULT_WORKERS = min(os.cpu_count() or 1, 4)
Inputs = Annotated[
    list[str],
    typer.Argument(
        metavar="INPUT...",
        help="Hand-history files or directories (JSON, JSON Lines, .gz, Parquet); "
        "with --engine spark, any path Spark reads (s3a://, hdfs://, ...).",
    ),
]
Workers = Annotated[
    int | None,
    typer.Option(
        "--workers",
        metavar="N",
        min=1,
        help="Blocks audited side by side (threads; by default the cores, at most "
        f"{DEFAULT_WORKERS} here); the output does not depend on it. Not with --engine spark, "
        "whose tasks are its cluster's cores.",
        show_default=False,
    ),
]
EngineOption = Annotated[
    Engine,
    typer.Option(
        "--engine",
        help="local: this process. spark: Apache Spark (the spark extra, and Java 17+), "
        "the same rows.",
    ),
]
Master = Annotated[
    str | None,
    typer.Option(
        "--master",
        metavar="URL",
        help="Spark's master, with --engine spark (by default spark-submit's, or "
        "local[*] on this machine).",
    ),
]
Append = Annotated[
    bool,
    typer.Option(
        "--append",
        help="Add the inputs to the audit in DIR (files already audited are skipped): "
        "the audit of one run over everything so far.",
    ),
]


RulesOption = Annotated[
    Path | None,
    typer.Option(
        "--rules",
        metavar="FILE",
        help="A house-rules file (TOML): named profiles of each game's values, and which "
        "tables play them; hands of other tables play the contract (`standard`). On "
        "--append, the profiles the audit holds apply when it is not given.",
    ),
]
SignKey = Annotated[
    Path | None,
    typer.Option(
        "--sign-key",
        metavar="FILE",
        help="Sign the run's chain digest with this Ed25519 private key (PEM); "
        "`check --public-key` verifies it.",
    ),
]
Replace = Annotated[
    bool,
    typer.Option(
        "--replace",
        help="Let a plain run replace an audit that appends built (a ledger); without it, "
        "such an audit is kept and the run refused.",
    ),
]


@command("verify", cls=_Command)
def verify_command(
    inputs: Inputs,
    out: Annotated[
        str,
        typer.Option(
            "--out",
            metavar="DIR",
            help="Where audit.duckdb is written (with --engine spark, also parquet/).",
        ),
    ] = "audit",
    parquet: Annotated[
        bool,
        typer.Option(
            "--parquet",
            help="Also write each table as Parquet in OUT/parquet/ (always, with --engine spark).",
        ),
    ] = False,
    workers: Workers = None,
    engine: EngineOption = Engine.local,
    master: Master = None,
    append: Append = False,
    replace: Replace = False,
    rules: RulesOption = None,
    sign_key: SignKey = None,
) -> None:
    """Ingest, re-evaluate, re-settle and compare; write the audit database.

    Exit 0 when nothing diverged, 1 when anything diverged or was quarantined,
    2 when the audit could not run.
    """
    kept = "the audit in it is unchanged" if append else "one already in it is unchanged"
    with exit_codes(f"; nothing was written to {out} ({kept})"):
        given = _Given(parquet, workers, engine, master, append, replace, rules, sign_key)
        summary = _verify(inputs, out, given)
        interrupts.pause_at("printing")
        say(summary.text())
    raise typer.Exit(int(ExitCode.CLEAN if summary.clean else ExitCode.FINDINGS))


@dataclass(frozen=True)
class _Given:
    """How verify was asked to run (its options)."""

    parquet: bool
    workers: int | None
    engine: Engine
    master: str | None
    append: bool
    replace: bool
    rules: Path | None
    sign_key: Path | None


def _verify(inputs: list[str], out: str, given: _Given) -> RunSummary:
    from pipeline.helpers.progress import Progress
    from pipeline.ingest.house_rules import read_rules
    from pipeline.storage.signing import private_key

    # What can be refused is, before anything is read.
    book = read_rules(given.rules) if given.rules is not None else None
    signer = private_key(given.sign_key) if given.sign_key is not None else None
    engine, append = given.engine, given.append
    _options_agree(
        engine, given.workers, given.master, given.parquet, append, given.replace, book is not None
    )
    if engine is Engine.spark:
        if signer is not None:
            raise AuditError("--sign-key is not supported with --engine spark yet.")
        from pipeline.spark.session import require_spark

        require_spark()  # before importing pyspark, to say what to install
        from pipeline.spark.engine import verify_on_spark
        from pipeline.storage.files import DB_NAME
        from pipeline.storage.ledger import may_replace

        if append:
            from pipeline.spark.append import append_on_spark

            return append_on_spark(inputs, out, given.master, progress=Progress())
        may_replace(Path(out) / DB_NAME, given.replace)
        return verify_on_spark(inputs, out, given.master, progress=Progress())
    from pipeline.engine.verify import verify
    from pipeline.helpers.no_pandas import arrow_without_pandas

    arrow_without_pandas()
    return verify(
        [Path(i) for i in inputs],
        Path(out),
        parquet=given.parquet,
        progress=Progress(),
        workers=given.workers or DEFAULT_WORKERS,
        append=append,
        replace=given.replace,
        book=book,
        signer=signer,
    )


def _options_agree(
    engine: Engine,
    workers: int | None,
    master: str | None,
    parquet: bool,
    append: bool,
    replace: bool,
    rules: bool,
) -> None:
    """verify's options that cannot go together, refused in a sentence before any work."""
    if engine is Engine.spark and workers is not None:
        raise AuditError(
            "--workers sets the local engine's threads; Spark runs a task per core of its "
            "cluster (--master local[N] on this machine: N cores)."
        )
    if engine is Engine.local and master is not None:
        raise AuditError("--master names Spark's master: give it with --engine spark.")
    if parquet and append and engine is Engine.local:
        raise AuditError(
            "--parquet is not written by --append (it would rewrite every table of the "
            "ledger each day): export the tables from audit.duckdb with DuckDB's COPY, or "
            "run a plain verify with --parquet."
        )
    if append and replace:
        raise AuditError("--append adds to the audit and --replace replaces it: give one.")
    if engine is Engine.spark and rules:
        raise AuditError(
            "--rules is not supported with --engine spark yet: audit house rules with the "
            "local engine."
        )


@command("explain", cls=_Command)
def explain_command(
    hand_id: Annotated[str, typer.Argument(metavar="HAND_ID", help="The hand to explain.")],
    db: Annotated[Path, typer.Option("--db", metavar="FILE", help="The audit database.")] = Path(
        "audit/audit.duckdb"
    ),
    evidence: Annotated[
        Path | None,
        typer.Option(
            "--evidence",
            metavar="DIR",
            help="Write the hand's case file to DIR (new or empty): its raw record, the "
            "explanation as text and HTML, its findings, rules and the audit's runs, and "
            "a MANIFEST.sha256 of them.",
        ),
    ] = None,
) -> None:
    """Show one hand step by step: rows per board, pairs, rake, stacks, and its divergences.

    A hand id that starts with - goes after --: handaudit explain -- -2#T1.
    """
    from pipeline.outputs.evidence import write_case
    from pipeline.outputs.explain import explain

    with exit_codes():
        if evidence is None:
            say(explain(db, hand_id))
            return
        files = write_case(db, hand_id, evidence)
        say(
            f"The case file of hand {hand_id} is in {evidence}: {', '.join(files)}, and "
            "MANIFEST.sha256 (check it with: sha256sum -c MANIFEST.sha256)."
        )


@command("check", cls=_Command)
def check_command(
    db: Annotated[Path, typer.Option("--db", metavar="FILE", help="The audit database.")] = Path(
        "audit/audit.duckdb"
    ),
    public_key: Annotated[
        Path | None,
        typer.Option(
            "--public-key",
            metavar="FILE",
            help="Also verify that every run was signed by this Ed25519 key (PEM).",
        ),
    ] = None,
) -> None:
    """Recompute the audit's seals and its chain of runs: exit 0 if intact, 1 naming
    each place it was altered after it was written."""
    from pipeline.outputs.check import check_audit
    from pipeline.storage.signing import public_key as read_public_key

    with exit_codes():
        signer = read_public_key(public_key) if public_key is not None else None
        checked = check_audit(db, signer)
    say(checked.text)
    if not checked.intact:
        raise typer.Exit(int(ExitCode.FINDINGS))


rules_app = typer.Typer(
    cls=_Group,
    help="House rules: which rules the tables' hands were dealt by.",
    no_args_is_help=True,
)
app.add_typer(rules_app, name="rules")


@rules_app.command("infer", cls=_Command)
def rules_infer_command(
    inputs: Annotated[
        list[str],
        typer.Argument(metavar="INPUT...", help="Hand histories (files or directories)."),
    ],
    rules: Annotated[
        Path | None,
        typer.Option(
            "--rules",
            metavar="FILE",
            help="A house-rules file whose profiles are candidates too (else the contract "
            "and the built-in catalogue of variants alone).",
        ),
    ] = None,
    write: Annotated[
        Path | None,
        typer.Option(
            "--write",
            metavar="FILE",
            help="Write the rules the tables fit as a rules file, with from/until where a "
            "table changed them: verify --rules FILE audits by it.",
        ),
    ] = None,
) -> None:
    """For each table, the rules under which its recorded outcomes are exact, and the
    hands where a table changed its rules. Hands' own `rules` fields are not believed."""
    from pipeline.engine.infer import infer_tables
    from pipeline.engine.inferred import Names, report, rules_file
    from pipeline.engine.pool import read_pool
    from pipeline.helpers.progress import Progress
    from pipeline.ingest import input_files
    from pipeline.ingest.house_rules import read_rules
    from pipeline.storage.files import write_whole

    interrupts.speaks_of(interrupts.NOTHING_WRITTEN)
    with exit_codes():
        book = read_rules(rules) if rules is not None else None
        paths = [Path(i) for i in inputs]
        files = input_files(paths)
        if write is not None:  # refused before anything is read
            _rules_target(write, rules, paths)
        progress = Progress()
        pool = read_pool(files, progress)
        found = infer_tables(pool, book, progress)
        progress.close()
        names = Names.of(pool, found.segments, book)
        say(report(pool, found, names))
        if not found.segments:  # every record quarantined: no rules to read or write
            if write is not None:
                say(f"\nNothing was written to {write}: no table to write rules for.")
            raise typer.Exit(int(ExitCode.FINDINGS))
        if write is not None:
            write_whole(write, rules_file(pool, found.segments, names))
            say(f"\nWrote {write}: verify --rules {write} audits each table by the rules it fits.")


def _rules_target(write: Path, rules: Path | None, inputs: list[Path]) -> None:
    """Refuse, in a sentence, a `--write` of rules infer that would go over the rules
    file given (by any of its names), an input, or where nothing can be made."""
    from pipeline.storage.files import checked_target, same_file

    if rules is not None and (write.resolve() == rules.resolve() or same_file(write, rules)):
        raise AuditError(
            f"{write} is the rules file given (--rules): it is not written over "
            "(nothing was written). Give --write another file name."
        )
    checked_target(write, "the rules file written", inputs=tuple(inputs))


# The games by name, as choices: every one for the reports' filter; those `generate`
# deals (taiwanese deals Taiwanese Jokers tables too, with --jokers).
if TYPE_CHECKING:
    GameName: TypeAlias = str
    DealtGame: TypeAlias = str
else:
    GameName = StrEnum("GameName", {name: name for name in VARIANTS})
    DealtGame = StrEnum(
        "DealtGame", {n: n for n, g in VARIANTS.items() if g is not TAIWANESE_JOKERS}
    )


def _share(flag: str, text: str, metavar: str = "SHARE") -> Any:
    """An option that takes a share, from 0 to 1."""
    return typer.Option(flag, metavar=metavar, min=0.0, max=1.0, help=text)


DealtVariant = Annotated[
    DealtGame | None,
    typer.Option(
        "--variant",
        help="The game (taiwanese deals Taiwanese Jokers tables too, with --jokers); "
        "taiwanese when not given.",
        show_default=False,
    ),
]
DealtRules = Annotated[
    Path | None,
    typer.Option(
        "--rules",
        metavar="FILE",
        help="A house-rules file: with --profile, deal and settle its profile's game by it.",
    ),
]
DealtProfile = Annotated[
    str | None,
    typer.Option(
        "--profile",
        metavar="NAME",
        help="The profile of --rules the tables are dealt by; their hands name it.",
    ),
]


def _bias(text: str) -> str:
    try:
        parse_bias(text)
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None
    return text


BiasOption = Annotated[
    str,
    typer.Option(
        "--bias",
        metavar="KIND",
        callback=_bias,
        help="Deal unfairly, for the fairness report to catch: suit (seat 1 favoured "
        "with hearts), naive (the swap-with-any-position shuffle), offbyone (Fisher-Yates "
        "off by one), riffle:K (K riffle shuffles), sticky (the last deck barely moved).",
    ),
]


BiasShare = Annotated[float | None, _share("--bias-share", "Share of hands biased (default 1).")]
BiasStrength = Annotated[
    float | None,
    _share(
        "--bias-strength",
        "suit: chance each card of seat 1 not a heart is swapped (default 0.25).",
        "P",
    ),
]


def _dealer(bias: str, share: float | None, strength: float | None, seed: int) -> Dealer:
    """The dealer `generate` asks for: a strength is the suit bias's alone, and a fair deal
    has no biased share."""
    kind = parse_bias(bias)[0]
    if strength is not None and kind is not Bias.suit:
        raise typer.BadParameter("only --bias suit has a strength", param_hint="--bias-strength")
    if share is not None and kind is Bias.fair:
        raise typer.BadParameter("a fair deal has no biased share", param_hint="--bias-share")
    share = 1.0 if share is None else share
    return dealer_for(bias, share, 0.25 if strength is None else strength, seed)


@command("generate", cls=_Command)
def generate_command(
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            metavar="FILE",
            help="The file to write (its fault list beside: FILE.faults.json).",
        ),
    ],
    tables: Annotated[int, typer.Option("--tables", metavar="T", min=1, help="Tables.")] = 8,
    hands: Annotated[int, typer.Option("--hands", metavar="H", min=1, help="Hands a table.")] = 50,
    seed: Annotated[int, typer.Option("--seed", metavar="S", help="Same seed, same output.")] = 1,
    jokers: Annotated[float, _share("--jokers", "Share of Taiwanese Jokers tables.")] = 0.5,
    faults: Annotated[float, _share("--faults", "Share of hands given a fault.", "RATE")] = 0.0,
    fmt: Annotated[
        HistoryFormat, typer.Option("--format", help="How the history is written.")
    ] = HistoryFormat.jsonl,
    variant: DealtVariant = None,
    scoring: Annotated[
        Scoring, typer.Option("--scoring", help="How chinese hands are scored.")
    ] = Scoring.one_six,
    rules: DealtRules = None,
    profile: DealtProfile = None,
    bias: BiasOption = Bias.fair.value,
    bias_share: BiasShare = None,
    bias_strength: BiasStrength = None,
) -> None:
    """Write a synthetic, correctly settled hand history (optionally with listed faults)."""
    from pipeline.engine.table_cache import cached_tables
    from pipeline.generate.run import generate, house_of
    from pipeline.helpers.progress import Progress

    dealer = _dealer(bias, bias_share, bias_strength, seed)
    interrupts.speaks_of("interrupted: the history written so far is incomplete")
    with exit_codes("; the file may be incomplete"), cached_tables():
        game = None if variant is None else str(variant)
        house = house_of(rules, profile, game)
        result = generate(
            out,
            tables=tables,
            hands=hands,
            seed=seed,
            jokers=jokers,
            fault_rate=faults,
            fmt=fmt,
            progress=Progress(),
            variant=house.game if house else game or "taiwanese",
            scoring=scoring,
            dealer=dealer,
            house=house,
        )
    say(result.sentence(), err=True)


HtmlFile = Annotated[
    Path | None,
    typer.Option(
        "--html", metavar="FILE", help="With 'audit': write the offline HTML report here."
    ),
]
Alpha = Annotated[
    float | None,
    typer.Option(
        "--alpha",
        metavar="RATE",
        help="With 'fairness': the family-wise false-alarm rate (Holm over its tests; "
        "0.01 when not given).",
        show_default=False,
    ),
]


@command("report", cls=_Command)
def report_command(
    name: Annotated[
        str | None, typer.Argument(metavar="NAME", help="The report (see --list), or 'audit'.")
    ] = None,
    db: Annotated[Path, typer.Option("--db", metavar="FILE", help="The audit database.")] = Path(
        "audit/audit.duckdb"
    ),
    from_day: Annotated[
        str | None, typer.Option("--from", metavar="DAY", help="First UTC day, YYYY-MM-DD.")
    ] = None,
    to_day: Annotated[
        str | None, typer.Option("--to", metavar="DAY", help="Last UTC day, YYYY-MM-DD.")
    ] = None,
    table: Annotated[
        str | None, typer.Option("--table", metavar="ID", help="Only this table.")
    ] = None,
    player: Annotated[
        str | None, typer.Option("--player", metavar="ID", help="Only this player.")
    ] = None,
    variant: Annotated[
        GameName | None, typer.Option("--variant", help="Only this game.", show_default=False)
    ] = None,
    fmt: Annotated[ReportFormat, typer.Option("--format", help="How the report is written.")] = (
        ReportFormat.table
    ),
    output: Annotated[
        Path | None, typer.Option("--output", metavar="FILE", help="Write here, not stdout.")
    ] = None,
    html_file: HtmlFile = None,
    list_reports: Annotated[bool, typer.Option("--list", help="Name every report.")] = False,
    csv_raw: Annotated[
        bool, typer.Option("--csv-raw", help="CSV cells as stored (no ' before = + - @).")
    ] = False,
    alpha: Alpha = None,
) -> None:
    """Run a named SQL report from sql/, the deal fairness report, or the HTML audit.

    --output - (and --html -) write to standard output; an output is never written over
    the audit or anything its directory keeps for it.
    """
    from pipeline.outputs import registry, reports

    with exit_codes():
        if list_reports or name is None:
            say(registry.listing())
            return
        spec = registry.spec(name)
        filtered = any(f is not None for f in (from_day, to_day, table, player, variant))
        _takes_only_its_options(spec, html_file, alpha, output, fmt, filtered)
        if "html" in spec.options:
            _page(db, name, html_file)
            return
        game = None if variant is None else str(variant)
        filters = reports.Filters.parse(from_day, to_day, table, player, game)
        target = reports.report_target(output, fmt, db)
        result = registry.run(db, name, filters, alpha)
        _show(reports.write_report(result, fmt, target, csv_raw=csv_raw), fmt)


def _takes_only_its_options(
    spec: ReportSpec,
    html_file: Path | None,
    alpha: float | None,
    output: Path | None,
    fmt: str,
    filtered: bool,
) -> None:
    """An option the report does not take is refused, not ignored (its spec says which)."""
    from pipeline.outputs.reports import ReportError

    name = spec.name
    if html_file is not None and "html" not in spec.options:
        raise ReportError(
            f"--html goes with 'audit' (the HTML report), not with {name!r}: use --output "
            "and --format for other reports."
        )
    if alpha is not None and "alpha" not in spec.options:
        raise ReportError(f"--alpha goes with 'fairness', not with {name!r}.")
    if "html" in spec.options and (output is not None or fmt != "table"):
        raise ReportError("The audit report is one HTML file: give --html FILE, not --output.")
    if not spec.filtered and filtered:
        raise ReportError(
            "The audit report covers the whole audit: --from, --to, --table, --player and "
            "--variant go with the other reports."
        )


def _page(db: Path, name: str, html_file: Path | None) -> None:
    from pipeline.outputs import registry
    from pipeline.outputs.reports import ReportError
    from pipeline.storage.files import checked_target, write_whole
    from pipeline.storage.store import audited_inputs

    if html_file is None:
        raise ReportError("The audit report is HTML: give --html FILE.")
    target = checked_target(html_file, "the HTML report", (db,), inputs=audited_inputs(db))
    text = registry.page(db, name)
    if target is None:
        typer.echo(text, nl=False)
        return
    write_whole(target, text)
    say(f"wrote {html_file}", err=True)


def _show(text: str | None, fmt: str) -> None:
    """A report on stdout: for a person (a table, or anything on a terminal) made visible;
    for a pipe or a file, exact data."""
    if text is not None and (fmt == "table" or sys.stdout.isatty()):
        say(text, nl=False)
    elif text is not None:
        typer.echo(text, nl=False)


def run() -> int:
    """The command, its exit code returned (`entry.main` runs it, with Ctrl-C handled)."""
    keep_freed_memory()
    try:
        app()
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else 1 if done.code else 0
    return 0
