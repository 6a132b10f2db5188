"""The README's picture is today's: docs/stability_curve.png carries the numbers it plots
(PNG text, written by the report), and they are the README's quoted answer.

The README's ``Answer:`` block is checked against today's run of ``ensstab estimate``
elsewhere (tests/test_readme.py, ``test_main_command_with_the_cli_defaults``); this test
checks the picture against that block, so a picture left stale by a change of the answer
fails here. ``python docs/make_readme_picture.py`` regenerates it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from PIL import Image

from ensstab_dask.plotting.report import CURVE_KEY

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PICTURE = ROOT / "docs" / "stability_curve.png"

# "    1 selector (no ensemble):  3.3 of 20 (17%); ..." and "    an ensemble of  5:  7.2 of 20 (36%); ..."
LINE = re.compile(r"^\s+(?:1 selector \(no ensemble\)|an ensemble of\s+(\d+)):\s+(\d+\.\d) of (\d+) \(")
HEAD = re.compile(r"features \(of (\d+)\) in common:")


def _quoted() -> tuple[dict[int, str], int, int]:
    """The README's answer: shared features as printed per ensemble size, n_target and n_feature."""
    block = re.search(r"```text\n(Answer: .*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    assert block, "README.md has no ```text block starting with 'Answer:'"
    lines = block[1].splitlines()
    shared, targets = {}, set()
    for line in lines:
        hit = LINE.match(line)
        if hit:
            shared[int(hit[1] or 1)] = hit[2]
            targets.add(int(hit[3]))
    assert 1 in shared and len(shared) >= 2 and len(targets) == 1, lines
    return shared, targets.pop(), int(HEAD.search(lines[0])[1])


def _plotted() -> dict:
    text = Image.open(PICTURE).text
    assert CURVE_KEY in text, (
        f"{PICTURE.name} carries no {CURVE_KEY!r}: made before the report wrote its numbers; "
        "regenerate it with python docs/make_readme_picture.py"
    )
    return json.loads(text[CURVE_KEY])


def test_the_readme_picture_plots_the_readme_answer():
    shared, n_target, n_feature = _quoted()
    plotted = _plotted()
    assert plotted["picture"] == "stability_curve"
    assert (plotted["n_target"], plotted["n_feature"]) == (n_target, n_feature)
    predicted = dict(zip(plotted["m_ensemble"], plotted["predicted_shared"]))
    assert set(shared) <= set(predicted), f"README sizes {sorted(shared)}, picture's {sorted(predicted)}"
    drawn = {m: f"{predicted[m]:.1f}" for m in shared}
    assert drawn == shared, (
        f"the picture plots {drawn} shared of {n_target}, the README says {shared}: "
        "regenerate it with python docs/make_readme_picture.py"
    )


def test_the_readme_picture_is_of_the_default_estimate():
    """The same settings as the README's ``ensstab estimate``: its default seed and model, and
    the naive check beside it (the data are the embedded default's: n_feature and n_target
    are checked against the README's block above)."""
    from ensstab_dask.checks import DEFAULT_MODEL
    from ensstab_dask.cli._parser import build_parser

    plotted = _plotted()
    args = build_parser().parse_args(["estimate"])
    assert plotted["seed"] == args.seed
    assert plotted["model"] == DEFAULT_MODEL
    assert plotted["naive_shared"], "the README's picture shows the naive real check"
