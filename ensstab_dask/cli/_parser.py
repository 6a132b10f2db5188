"""The ``ensstab`` parser: one function per command, the options they share, and each
command's options by the library's names for them (:func:`_cli_options`)."""

from __future__ import annotations

import argparse
import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ensstab_dask._version import __version__
from ensstab_dask.checks import DEFAULT_M_ENSEMBLE, DEFAULT_PREDICTOR, SIMULATOR_MODELS
from ensstab_dask.cli._common import CACHE_FOLDER, UsageError, check_options_alone, parse_values
from ensstab_dask.estimates.validation.naive_settings import NaiveSettings
from ensstab_dask.real.datasets import data_formats
from ensstab_dask.real.named_selectors import DEFAULT_SELECTORS, NAMED_SELECTORS, selectors_help
from ensstab_dask.real.selectors import DEFAULT_TREES
from ensstab_dask.real.targets import TASKS
from ensstab_dask.settings import DEFAULTS, SETTINGS, USED_WHEN, Setting, models_using
from ensstab_dask.settings.constraints import BootCount, Flag, Int, Options, OrNone, Real, Seed, Sizes


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Each option's default at the end of its help, and the epilogs' examples kept as written.

    Not for flags (their default is "off") nor options without one (None), which would
    read "(default: None)"; nor where the help already says what the default is.
    """

    def _get_help_string(self, action):
        if action.default is None or action.default is False or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)

    def _fill_text(self, text, width, indent):
        if text.startswith("examples:"):  # command lines: one per line, not wrapped into a paragraph
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # one line, no usage dump
        raise UsageError(message)


def _path(text: str) -> str:
    """A path option's value, never empty: ``--data "$FILE"`` with ``FILE`` unset must not
    read as the option left out (the embedded data, no output written)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path (an unset shell variable?); give a file or folder name")
    return text


def _values(kind: Callable[[str], Any], option: str) -> Callable[[str], str]:
    """The type of a list or range option (``10,20,40``, ``10:50:10``): the text checked as
    the command reads it (:func:`~ensstab_dask.cli._common.parse_values`) while the command
    line is read, so that a bad one is refused before the commands' imports, and kept as
    typed for the command."""

    def checked(text: str) -> str:
        parse_values(text, kind, name=option)
        return text

    return checked


def _command(name: str) -> Callable[[argparse.Namespace], int]:
    """The function of the command ``name`` (``command_<name>`` of
    :mod:`~ensstab_dask.cli._commands`), imported when it runs: the commands import Dask,
    xarray, scipy and scikit-learn, which the help and a command line refused here never
    need (docs/performance.md, "Start-up"; tests/cli/test_startup.py)."""

    def run(args: argparse.Namespace) -> int:
        import ensstab_dask.cli._commands as commands  # here: the commands' imports take seconds

        return getattr(commands, f"command_{name}")(args)

    return run


def _flag(name: str) -> str:
    """The option of the library's parameter ``name``: n_target -> --n-target."""
    return "--" + name.replace("_", "-")


def _add_setting(p: argparse.ArgumentParser, setting: Setting, *, default: Any) -> None:
    """The option of one estimate setting, made from its record in
    :data:`~ensstab_dask.settings.SETTINGS`: its type and choices from its constraint, its
    help with each setting it names between backquotes (`` `resample` ``) written as its
    option (``--resample``). Values the command line cannot type (the sizes, a resample)
    are read as text by :func:`~ensstab_dask.cli._common.estimate_options`, and checked
    there by the settings' own constraints."""
    text = setting.described(_flag)
    if isinstance(setting.constraint, Flag):  # on by default: --no-NAME turns it off
        p.add_argument(_flag(("no_" if setting.default else "") + setting.name), action="store_true", help=text)
        return
    if setting.name == "selector":  # the command line names the library's selector objects
        p.add_argument("--selector", default="rf", choices=list(NAMED_SELECTORS), help=f"{text}: {selectors_help()}")
        _add_n_estimators(p)
        return
    constraint = setting.constraint.constraint if isinstance(setting.constraint, OrNone) else setting.constraint
    kind: Callable[[str], Any] = {Int: int, BootCount: int, Seed: int, Real: float}.get(type(constraint), str)
    choices = constraint.allowed if isinstance(constraint, Options) else None
    if choices is not None and isinstance(setting.constraint, OrNone):
        # A choice that may be None is typed as the word none (compare's --predictor none: no
        # accuracy), read as None with the other values (cli._common.estimate_options).
        choices = (*choices, "none")
    if isinstance(constraint, Sizes):
        kind, default = _values(int, _flag(setting.name)), ",".join(map(str, default))
    p.add_argument(_flag(setting.name), type=kind, choices=choices, default=default, metavar=setting.metavar, help=text)


def _add_n_estimators(p: argparse.ArgumentParser) -> None:
    """``--n-estimators``: the trees of the named selectors that grow them (the table says which)."""
    grown = " and ".join(name for name, named in NAMED_SELECTORS.items() if named.trees)
    p.add_argument("--n-estimators", type=int, default=DEFAULT_TREES, help=f"trees for {grown}")


def _add_shared_options(p: argparse.ArgumentParser) -> None:
    """The options every command that simulates ensembles has, as the estimate has them."""
    for setting in SETTINGS:
        if setting.name in ("aggregate", "index", "seed"):
            _add_setting(p, setting, default=setting.default)


def _add_problem_options(p: argparse.ArgumentParser) -> None:
    # Defaults are the library's (simulated_stability, sweep): tests/cli/test_cli.py checks them.
    p.add_argument("--n-feature", type=int, default=2000, help="number of features")
    p.add_argument("--n-target", type=int, default=20, help="features each selector keeps")
    p.add_argument("--m-stability", type=int, default=50, help="ensemble copies behind each stability value")
    _add_shared_options(p)


def _add_cluster_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="Dask scheduler address (tcp://host:8786 or tls://host:8786), or processes (the default: one worker "
        "process per core), threads, synchronous",
    )
    p.add_argument(
        "--workers",
        metavar="N",
        type=int,
        default=None,
        help="worker processes of the local cluster (threads for --scheduler threads); default: one per core",
    )
    p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for a scheduler")
    tls = p.add_argument_group(
        "TLS",
        "certificates for a tls:// scheduler; without them, the dask configuration's distributed.comm.tls "
        "section is used (a dask config file in ~/.config/dask or $DASK_CONFIG)",
    )
    tls.add_argument(
        "--tls-ca-file", metavar="PEM", type=_path, help="the CA certificate(s) that signed the cluster's certificates"
    )
    tls.add_argument("--tls-cert", metavar="PEM", type=_path, help="this client's certificate (may also hold the key)")
    tls.add_argument("--tls-key", metavar="PEM", type=_path, help="this client's private key")


def _add_cache_options(p: argparse.ArgumentParser, *, no_cache: bool) -> None:
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        type=_path,
        default=None,
        help="where real runs and naive curves are cached, so that a rerun on the same data and settings reuses "
        f"them (default $XDG_CACHE_HOME/ensstab_dask/{CACHE_FOLDER}, else ~/.cache/ensstab_dask/{CACHE_FOLDER})",
    )
    if no_cache:
        p.add_argument("--no-cache", action="store_true", help="neither reuse nor keep real runs: run them all")


def _add_yes(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--yes",
        action="store_true",
        help="run even above 10,000 real runs or 10^8 simulated selectors (without it such a run is refused before "
        "any work, saying what it would cost)",
    )


def _add_quiet(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-q",
        "--quiet",
        "--no-progress",  # an alias people guess
        dest="quiet",
        action="store_true",
        help="no progress bars and no progress notes (dashboard link, resume note): warnings and errors only",
    )


def _add_data_options(est: argparse.ArgumentParser) -> None:
    """The data an estimate reads (the file, its label column, the classes kept) and the
    features each selector keeps."""
    est.add_argument(
        "--data",
        metavar="PATH",
        type=_path,
        help=f"a {data_formats()} file (.mat: scikit-feature's layout; .h5ad: AnnData, needs the anndata package); "
        "default: the embedded default",
    )
    est.add_argument(
        "--label", default=None, help="the label column (name or index): of the CSV file, or of obs for .h5ad"
    )
    csv = est.add_argument_group("CSV layout", "a CSV as pandas' DataFrame.to_csv() or a spreadsheet writes it")
    csv.add_argument(
        "--index-col",
        metavar="NAME",
        default=None,
        help="the column of sample ids (name or position), not a feature; default: a first column named '' or "
        "Unnamed: 0 (what to_csv() writes), or of text, or of whole numbers named like id, index or sample_id",
    )
    csv.add_argument(
        "--no-index-col",
        action="store_true",
        help="no column holds sample ids: every column but the label is a feature",
    )
    csv.add_argument(
        "--transpose",
        action="store_true",
        help="the file holds one column per sample (genes as rows), the labels in the row --label names; default: "
        "so read, with a warning, when --label (or a row named label, y, class or target) names a row and no column",
    )
    csv.add_argument("--no-transpose", action="store_true", help="refuse a file whose label names a row, not a column")
    ad = est.add_argument_group("AnnData", "which matrix of a .h5ad file is read, as scanpy's layer= and use_raw=")
    ad.add_argument("--layer", metavar="NAME", default=None, help="read adata.layers[NAME] instead of X")
    ad.add_argument("--use-raw", action="store_true", help="read adata.raw.X and adata.raw.var_names instead of X")
    est.add_argument(
        "--task",
        choices=TASKS,
        default="auto",
        help="what the label is: auto reads it from the values (numbers with fractions are a regression target), "
        "regression also takes whole numbers (counts, scores); a regression target runs a random forest regressor "
        "(--selector rf or extra-trees), its halves stratified by quantile bins of the label",
    )
    est.add_argument(
        "--classes",
        metavar="A,B",
        default=None,
        help="keep only the samples of these classes (at least two, by their labels as the data line prints them), "
        "in any format; default: every class, and more than two are used together (features ranked by how they "
        "separate every class)",
    )
    groups = est.add_argument_group(
        "groups", "one group against the rest, for every group, as scanpy's rank_genes_groups (estimate only)"
    )
    groups.add_argument(
        "--groupby",
        metavar="COLUMN",
        default=None,
        help="the label column of groups (instead of --label): an estimate for each group against --reference, "
        "their real runs sent to the cluster together",
    )
    groups.add_argument(
        "--groups", metavar="A,B", default=None, help="the groups to estimate, by label; default: every group"
    )
    groups.add_argument(
        "--reference",
        metavar="GROUP",
        default="rest",
        help="what each group is told from: rest (every other sample, the default) or one group",
    )
    est.add_argument(
        "--n-target",
        type=_values(int, "--n-target"),
        default="20",
        help="features each selector keeps; estimate also takes a list or an inclusive range (10,20,40 or "
        "10:50:10): the stability over n_target from the same real runs, the first the estimate's own",
    )


def _add_estimate_options(
    est: argparse.ArgumentParser, *, defaults: Mapping[str, Any], one_selector: bool = True
) -> None:
    """The estimate's options, shared by ``estimate``, ``validate`` and ``compare``: the data,
    then one per setting of :data:`~ensstab_dask.settings.SETTINGS`, with ``defaults`` (those
    of the library function behind the command); without ``one_selector``, no --selector
    (the command takes several), only --n-estimators."""
    _add_yes(est)
    _add_data_options(est)
    for setting in SETTINGS:
        if setting.name == "selector" and not one_selector:
            _add_n_estimators(est)
            continue
        _add_setting(est, setting, default=defaults[setting.name])
    _name_the_models(est)


def _settings_defaults(function) -> dict[str, Any]:
    """Each setting's default for the library ``function`` (or settings class): its own
    where its signature declares the setting, the table's otherwise."""
    declared = {p.name: p.default for p in inspect.signature(function).parameters.values() if p.name in DEFAULTS}
    return {**DEFAULTS, **declared}


#: The options most runs of ``estimate`` and ``validate`` use, shown first in their help.
COMMON_OPTIONS = (
    "--data",
    "--label",
    "--groupby",
    "--n-target",
    "--m-ensemble",
    "--copies",
    "--features",
    "--report",
    "--json",
    "--workers",
    "--scheduler",
    "--quiet",
    "--yes",
)


def _common_first(p: argparse.ArgumentParser, common: Sequence[str]) -> None:
    """Move ``common`` options (those ``p`` has) into a group shown first in its help, and
    the options only some other model than the default uses into a group of their own,
    shown after the rest: the help starts with what most runs need."""
    from ensstab_dask.checks import DEFAULT_MODEL

    first = p.add_argument_group("common options")
    others = p.add_argument_group(
        "options of the other models", f"used only by a --model other than the default ({DEFAULT_MODEL})"
    )
    # argparse has no public way to regroup options; its groups' action lists are the help's.
    for group in [g for g in p._action_groups if g not in (first, others)]:
        for action in list(group._group_actions):
            setting = action.dest.removeprefix("no_")
            if any(option in common for option in action.option_strings):
                target = first
            elif setting in USED_WHEN and DEFAULT_MODEL not in models_using(setting):
                target = others
            else:
                continue
            group._group_actions.remove(action)
            target._group_actions.append(action)
    first._group_actions.sort(key=lambda a: next(common.index(o) for o in a.option_strings if o in common))
    p._action_groups.remove(first)
    p._action_groups.insert(p._action_groups.index(p._optionals), first)
    p._optionals.title = "more options"


def _name_the_models(p: argparse.ArgumentParser) -> None:
    """End the help of each option only some models use with those models
    (:data:`~ensstab_dask.settings.USED_WHEN`): what the default model ignores says so."""
    for action in p._actions:  # argparse has no public list of a parser's options
        setting = action.dest.removeprefix("no_")
        if setting in USED_WHEN:
            action.help = f"{action.help} (--model {', '.join(models_using(setting))} only)"


def _add_output_options(
    p: argparse.ArgumentParser, *, features: bool = False, report: bool = False, h5ad: bool = False
) -> None:
    p.add_argument(
        "--json",
        metavar="OUT.json",
        type=_path,
        help="write the results as JSON; - writes them to standard output (the printed lines then go to stderr)",
    )
    p.add_argument("--output", metavar="OUT.nc", type=_path, help="write the curve and results to netCDF")
    if features:
        p.add_argument(
            "--features",
            metavar="OUT.csv",
            type=_path,
            help="write each feature's selection frequency over the real ensemble copies (name, frequency_m<size> "
            "per measured size with its interval, mean rank), most often kept first; written whatever the verdict",
        )
    if report:
        p.add_argument(
            "--report",
            metavar="DIR",
            type=_path,
            help="also write the report: the pictures and an index.html into DIR (what ensstab report draws from "
            "--output, in one step)",
        )
    if h5ad:
        p.add_argument(
            "--write-h5ad",
            metavar="OUT.h5ad",
            type=_path,
            help="with an .h5ad --data: write a copy of it with the results where scanpy users look: each "
            "feature's frequencies in var and, with --groupby, each group's genes in uns['ensstab_markers'] in "
            "rank_genes_groups' layout (sc.get.rank_genes_groups_df and the dot plot read it); a new file, never "
            "an existing .h5ad",
        )
    p.add_argument("--overwrite", action="store_true", help="replace existing output files")


def _add_model_options(p: argparse.ArgumentParser, *, dest: str = "model") -> None:
    """The simulator's ``--model`` and ``--h``; ``dest``: the library's name for the first
    (the kernel's ``variant``, a sweep's ``model``), so that its messages name ``--model``."""
    p.add_argument(
        "--model",
        dest=dest,
        default="onda",
        choices=SIMULATOR_MODELS,
        help="the simulator: onda (the paper's) or two-level (docs/two_level_model.md)",
    )
    p.add_argument(
        "--h",
        type=int,
        default=None,
        help="--model two-level only: size of each ensemble copy's preferred set, n_target <= h <= n_useful",
    )


def _examples(*lines: str) -> str:
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ensstab",
        description="Estimate the stability of ensemble feature selectors from a few real runs, on Dask: the fast "
        "estimation method of Onda et al. (--model onda) and, by default, a model that measures a few small real "
        "ensembles and extrapolates (--model anchored). Each command has its own --help.",
    )
    parser.add_argument("--version", action="version", version=f"ensstab_dask {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    _add_simulate_command(sub)
    _add_sweep_command(sub)
    _add_estimate_command(sub)
    _add_validate_command(sub)
    _add_compare_command(sub)
    _add_report_command(sub)
    _add_verify_command(sub)
    _add_export_command(sub)
    _add_cache_command(sub)

    for command in sub.choices.values():
        command.set_defaults(cli_options=_cli_options(command))
    return parser


def _add_simulate_command(sub) -> None:
    """``ensstab simulate``."""
    sim = sub.add_parser(
        "simulate",
        help="print the simulated stability curve over ensemble sizes",
        description="Print the stability of ensembles of the simulated weak selector (n_useful, p) for each "
        "ensemble size, computed in this process.",
    )
    _add_problem_options(sim)
    _add_yes(sim)
    sim.add_argument("--n-useful", type=int, default=60, help="size of S', the simulated useful features")
    sim.add_argument("--p", type=float, default=0.7, help="probability of picking the next feature from S_m")
    sim.add_argument(
        "--m-ensemble",
        type=_values(int, "--m-ensemble"),
        default=",".join(map(str, DEFAULT_M_ENSEMBLE)),
        help="ensemble sizes: a list, or an inclusive range start:stop:step",
    )
    sim.add_argument("--json", metavar="OUT.json", type=_path, help="also write the curve as JSON")
    sim.add_argument("--overwrite", action="store_true", help="replace an existing --json file")
    _add_model_options(sim, dest="variant")
    sim.set_defaults(func=_command("simulate"))


def _add_sweep_command(sub) -> None:
    """``ensstab sweep``."""
    sw = sub.add_parser(
        "sweep",
        help="simulated stability and n_useful_v over a (n_useful, p, m_ensemble) grid",
        description="Map the simulator's two surfaces over a (n_useful, p, m_ensemble) grid, on a Dask cluster: "
        "the simulated ensemble stability and n_useful_v = A[f_(u,p)], each cell from --repeats independent draws. "
        "With --store, every finished block is kept in a zarr store, and the same command run again resumes it.",
        epilog=_examples(
            "ensstab sweep --n-useful 20:100:20 --p 0.1:1.0:0.1 --m-ensemble 1,5 --store sweep.zarr   # 100 cells",
            "ensstab verify sweep.zarr && ensstab export sweep.zarr sweep.nc   # once the sweep is done",
            "ensstab sweep --n-useful 20:810:10 --p 0.01:1.0:0.01 --m-ensemble 1,5,10,30 --store full.zarr   "
            "# full size: 32,000 cells",
            "ensstab sweep --n-useful 20,40 --p 0.5,0.7 --scheduler tcp://10.0.0.5:8786 --output small.nc",
        ),
    )
    _add_problem_options(sw)
    _add_yes(sw)
    sw.add_argument(
        "--n-useful",
        type=_values(int, "--n-useful"),
        required=True,
        help="grid of n_useful: a list like 20,40,80 or a range like 20:810:10",
    )
    sw.add_argument(
        "--p",
        type=_values(float, "--p"),
        required=True,
        help="grid of p: a list like 0.3,0.6 or a range like 0.01:1.0:0.01",
    )
    sw.add_argument(
        "--m-ensemble", type=_values(int, "--m-ensemble"), default="1", help="grid of ensemble sizes, like 1,5,10,30"
    )
    sw.add_argument("--n-runs", type=int, default=None, help="runs behind each n_useful_v (default: m_ensemble)")
    sw.add_argument("--repeats", type=int, default=10, help="independent draws per cell")
    sw.add_argument(
        "--store", metavar="PATH.zarr", type=_path, help="zarr store: written as blocks finish, resumed on rerun"
    )
    sw.add_argument("--output", metavar="OUT.nc", type=_path, help="also write the finished sweep to netCDF")
    sw.add_argument("--overwrite", action="store_true", help="replace an existing --output file")
    _add_cluster_options(sw)
    _add_quiet(sw)
    sw.add_argument("--batch-size", type=int, default=None, help="cells per task (default: about 0.5 s of work)")
    _add_model_options(sw)
    sw.set_defaults(func=_command("sweep"))


def _add_estimate_command(sub) -> None:
    """``ensstab estimate``."""
    est = sub.add_parser(
        "estimate",
        help="predict the stability of ensembles of a real selector",
        description="Predict the stability of ensembles of a real feature selector from a few real runs. By default "
        "(--model anchored) 10 real ensemble copies of 20 weak selectors measure the stability up to 20 members and "
        "it is extrapolated beyond; --model onda is the paper's Algorithm 1 (Onda et al.): a simulator's n_useful "
        "and p fitted to --n-runs + --m-stability real runs, the ensembles simulated. Every number comes with an "
        "interval, and the summary starts with a verdict on whether to believe it.",
        epilog=_examples(
            "ensstab estimate                          # the embedded default study (no download)",
            "ensstab estimate --data colon.mat --n-target 20 --json colon.json",
            "ensstab estimate --data cells.h5ad --label condition --n-target 10,20,40 --features features.csv",
            "ensstab estimate --data study.csv --label class --scheduler tcp://10.0.0.5:8786 --quiet",
        ),
    )
    _add_estimate_options(est, defaults=DEFAULTS)
    est.add_argument(
        "--validate", action="store_true", help="also run the naive real check, m_stability x m_ensemble runs"
    )
    est.add_argument(
        "--details", action="store_true", help="after the summary, every measure of one selector's stability"
    )
    _add_cache_options(est, no_cache=True)
    _add_cluster_options(est)
    _add_quiet(est)
    _add_output_options(est, features=True, report=True, h5ad=True)
    _common_first(est, COMMON_OPTIONS)
    est.set_defaults(func=_command("estimate"), check_alone=check_options_alone)


def _add_compare_command(sub) -> None:
    """``ensstab compare``."""
    cmp = sub.add_parser(
        "compare",
        help="which selector and which ensemble size: stability and accuracy side by side",
        description="An estimate per selector on the same data, every selector's real runs sent to the cluster "
        "together and each cached as its own (a selector added later runs only its own), each copy's features "
        "scored by --predictor on the half of the samples it did not see. Prints which selector and size keep "
        "the most features among those within one SE of the best accuracy, and what each other selector needs.",
        epilog=_examples(
            "ensstab compare --selectors rf,extra-trees,l1-logistic,f-test   # the embedded default study",
            "ensstab compare --data colon.mat --n-target 20 --report colon-selectors/ --json colon-selectors.json",
        ),
    )
    cmp.add_argument(
        "--selectors",
        default=",".join(DEFAULT_SELECTORS),
        help=f"the selectors compared, comma-separated, at least two: {selectors_help()} "
        f"(default: {','.join(DEFAULT_SELECTORS)})",
    )
    _add_estimate_options(cmp, defaults={**DEFAULTS, "predictor": DEFAULT_PREDICTOR}, one_selector=False)
    _add_cache_options(cmp, no_cache=True)
    _add_cluster_options(cmp)
    _add_quiet(cmp)
    _add_output_options(cmp, report=True)
    _common_first(cmp, ("--selectors", *COMMON_OPTIONS))
    # The estimate's options read one selector; compare's are --selectors, this one unused.
    cmp.set_defaults(func=_command("compare"), check_alone=check_options_alone, selector="rf")


def _add_validate_command(sub) -> None:
    """``ensstab validate``."""
    val = sub.add_parser(
        "validate",
        help="the estimate against the naive real check, per ensemble size (the validation harness)",
        description="Run the estimate and the naive check (bagging layout) on the same data and cluster, and print "
        "per m_ensemble: predicted [interval], real +- SE, z, covered. The naive curve is cached as netCDF in "
        "--cache-dir, so a rerun with the same data and settings reuses it.",
        epilog=_examples(
            "ensstab validate                          # the embedded default; the naive check takes minutes",
            "ensstab validate --data colon.mat --n-target 20 --json colon-validation.json",
            "ensstab validate --model onda --calibrate --output validation.nc && ensstab report validation.nc -o r/",
        ),
    )
    # validate's own defaults where it has them, the naive check's (fewer copies: its cost grows with them)
    _add_estimate_options(val, defaults=_settings_defaults(NaiveSettings))
    _add_cache_options(val, no_cache=False)
    _add_cluster_options(val)
    _add_quiet(val)
    _add_output_options(val, report=True)
    _common_first(val, COMMON_OPTIONS)
    val.set_defaults(func=_command("validate"), check_alone=check_options_alone)


def _add_report_command(sub) -> None:
    """``ensstab report``."""
    rep = sub.add_parser(
        "report",
        help="pictures and a self-contained index.html of an estimate or a sweep",
        description="Draw the pictures that apply to a result (an estimate, a validation or a sweep) and write them "
        "into DIR with a self-contained index.html. RESULT is a netCDF file (from estimate, validate or sweep "
        "--output, or from export) or a sweep store (the .zarr directory of sweep --store).",
    )
    rep.add_argument(
        "result",
        metavar="RESULT",
        type=_path,
        help="a netCDF file (estimate, validate or sweep --output, or export) or a sweep store (PATH.zarr)",
    )
    rep.add_argument(
        "-o", "--output", metavar="DIR", type=_path, required=True, help="directory to write (PNG files, index.html)"
    )
    rep.add_argument("--overwrite", action="store_true", help="replace an existing, non-empty DIR")
    rep.add_argument("--real-stability", type=float, help="sweeps: the observed single-selector stability")
    rep.add_argument("--n-useful", type=float, help="sweeps: the observed n_useful")
    rep.add_argument("--n-runs", type=int, help="sweeps: the runs behind the observed n_useful")
    rep.set_defaults(func=_command("report"))


def _add_verify_command(sub) -> None:
    """``ensstab verify``."""
    ver = sub.add_parser(
        "verify",
        help="check a sweep store: its metadata against its record, and data behind every done cell",
        description="Check a sweep store: its attributes and coordinates against the settings record written with "
        "it, and data behind every cell marked done. Exit status 0 when sound, 1 when damaged.",
    )
    ver.add_argument(
        "store", metavar="STORE", type=_path, help="the sweep's zarr store (the PATH.zarr of sweep --store)"
    )
    ver.set_defaults(func=_command("verify"))


def _add_export_command(sub) -> None:
    """``ensstab export``."""
    ex = sub.add_parser(
        "export",
        help="write a finished sweep store to netCDF",
        description="Write a finished sweep store to one netCDF file, after checking it as verify does. The file "
        "is written under a temporary name and renamed into place.",
    )
    ex.add_argument(
        "store", metavar="STORE", type=_path, help="the sweep's zarr store (the PATH.zarr of sweep --store)"
    )
    ex.add_argument("out", metavar="OUT.nc", type=_path, help="the netCDF file to write (not inside STORE)")
    ex.add_argument("--overwrite", action="store_true", help="replace an existing OUT.nc")
    ex.add_argument("--allow-incomplete", action="store_true", help="export even if some cells are not computed yet")
    ex.set_defaults(func=_command("export"))


def _add_cache_command(sub) -> None:
    """``ensstab cache``."""
    cache = sub.add_parser(
        "cache",
        help="the cache of real runs: where it is, its size, and clearing it",
        description="Say where the cache of real runs and naive curves is, how many entries it holds, their size "
        "and dates; --clear removes every entry, --older-than DATE those last written before DATE. Only the "
        "cache's own files (runs-*.nc, naive-*.nc) are ever removed.",
        epilog=_examples(
            "ensstab cache                             # where, how many, how large",
            "ensstab cache --older-than 2026-11-01     # remove the entries last written before November",
            "ensstab cache --clear --cache-dir ./runs  # remove every entry of another folder",
        ),
    )
    _add_cache_options(cache, no_cache=False)
    how = cache.add_mutually_exclusive_group()
    how.add_argument("--clear", action="store_true", help="remove every entry")
    how.add_argument(
        "--older-than",
        metavar="DATE",
        type=_date,
        default=None,
        help="remove the entries last written before DATE (YYYY-MM-DD, local time)",
    )
    cache.set_defaults(func=_command("cache"))


def _date(text: str):
    """A YYYY-MM-DD date, as argparse reads an option's value."""
    import datetime

    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date: give YYYY-MM-DD, as 2026-11-01") from None


#: Options whose value is a list or a range: a value starting with '-' (-0.2,0.5) is not
#: one number, so argparse would take it for an option and say "expected one argument".
_LIST_OPTIONS = ("--p", "--n-useful", "--m-ensemble")


_NEGATIVE_VALUES = re.compile(r"-[0-9.][0-9.,:eE+-]*")


def attach_negative_values(argv: Sequence[str]) -> list[str]:
    """``--p -0.2,0.5`` as ``--p=-0.2,0.5``, so that the range check reports the value."""
    rest, out = list(argv), []  # type: list[str], list[str]
    while rest:
        token = rest.pop(0)
        if token == "--":  # what follows is positional, whatever it looks like
            return out + [token] + rest
        if token in _LIST_OPTIONS and rest and _NEGATIVE_VALUES.fullmatch(rest[0]):
            token = f"{token}={rest.pop(0)}"
        out.append(token)
    return out


def _cli_options(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Each option of ``parser`` by its dest, the library's name for it: n_target -> --n-target
    (what :class:`~ensstab_dask.cli._common.OptionSpelling` spells the library's messages with)."""
    return {
        action.dest: next(o for o in action.option_strings if o.startswith("--"))
        for action in parser._actions  # argparse has no public list of a parser's options
        if any(o.startswith("--") for o in action.option_strings)
    }
