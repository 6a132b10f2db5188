"""Each kind of report, opened as users open it: in a real browser (headless Chromium), at
1280 px and at 390 px (a phone).

For the report of an estimate, of a validation, of an estimate per group, of a sweep and
of a comparison of selectors:
no text wider than its box (nothing cut at the right edge, no page that scrolls sideways),
every image loaded, no console error, no request leaving the file, and a feature and a
group named ``<img src=x onerror=alert(1)>`` shown as text (no image made of it, no alert).
The estimates' answer is prose and a table, not a terminal's text in a box.

With ``ENSSTAB_SCREENSHOTS=DIR`` each page's screenshot is written there: docs/report-pages/
holds them (``ENSSTAB_SCREENSHOTS=docs/report-pages python -m pytest tests/plotting/test_report_page.py``).
"""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path

import pytest

import ensstab_dask as es
from ensstab_dask.plotting.compare_report import write_compare_report
from ensstab_dask.plotting.group_report import write_group_report
from ensstab_dask.plotting.report import write_report
from ensstab_dask.real.datasets import make_microarray

playwright = pytest.importorskip(
    "playwright.sync_api", reason="playwright drives the browser: pip install playwright (in '.[test]')"
)

WIDTHS = (1280, 390)
HOSTILE = "<img src=x onerror=alert(1)>"
KINDS = ("estimate", "validate", "groups", "sweep", "compare")
SMALL = dict(selector=es.default_selector(10), client="synchronous", progress=False)


def _chromium() -> str | None:
    """The browser: Debian's ``chromium`` (``apt-get install chromium``), or another Chrome."""
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        if path := shutil.which(name):
            return path
    return None


@pytest.fixture(scope="module")
def browser():
    path = _chromium()
    if path is None:
        pytest.skip("no Chromium to open the reports in: apt-get install chromium (.ci/run does, as root)")
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=["--no-sandbox"])
        yield b
        b.close()


def _names(n_feature: int, informative) -> list[str]:
    """Feature names, each informative one hostile (so that one the answer keeps is)."""
    names = [f"g{j}" for j in range(n_feature)]
    for i, j in enumerate(informative):
        names[j] = HOSTILE if i == 0 else f"<img src=x onerror=alert({i + 1})>"
    return names


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, Path]:
    """One report of each kind, from small estimates, a hostile feature and group among them."""
    out = tmp_path_factory.mktemp("reports")
    data = make_microarray(n_feature=300, n_informative=10, effect=3.0, seed=1)
    names = _names(300, data.informative)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", es.UnreliableEstimateWarning)
        est = es.estimate(data.X, data.y, 5, m_ensemble=(1, 5, 20, 50), feature_names=names, **SMALL)
        val = es.validate(data.X, data.y, 5, m_ensemble=(1, 5, 20), m_stability=4, feature_names=names, **SMALL)
        labels = [HOSTILE if c else "rest-like" for c in data.y]
        labels = [f"{g}{i % 2}" if g == "rest-like" else g for i, g in enumerate(labels)]
        groups = es.estimate_groups(data.X, labels, 5, m_ensemble=(1, 5, 20), feature_names=names, **SMALL)
        selectors = {HOSTILE: es.default_selector(10), "f-test": "f-test"}
        small = {k: v for k, v in SMALL.items() if k != "selector"}
        compared = es.compare(
            data.X, data.y, 5, selectors=selectors, m_ensemble=(1, 5, 20), predictor="logistic", **small
        )
    sweep = es.sweep(300, 10, n_useful=[20, 40], p=[0.5, 0.7], m_ensemble=[1, 5], repeats=2, client="synchronous")
    return {
        "estimate": write_report(est, out / "estimate"),
        "validate": write_report(val.to_dataset(), out / "validate"),
        "groups": write_group_report(groups, out / "groups"),
        "sweep": write_report(sweep, out / "sweep"),
        "compare": write_compare_report(compared, out / "compare"),
    }


#: What the page says of itself: text cut at an edge, images not loaded, an image made of a name.
MEASURE = """() => {
  const width = document.documentElement.clientWidth, cut = [];
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0) continue;
    const text = (el.textContent || el.alt || '').trim().slice(0, 80);
    if (r.right > width + 1) cut.push(`${el.tagName} beyond the page's right edge: ${text}`);
    const style = getComputedStyle(el);
    if (el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0 && style.overflowX !== 'visible')
      cut.push(`${el.tagName} wider than its box (scrolls): ${text}`);
  }
  return {
    cut,
    pageScrolls: document.documentElement.scrollWidth > width + 1,
    broken: [...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.alt),
    images: document.images.length,
    madeOfNames: document.querySelectorAll('img[src="x"]').length,
    text: document.body.innerText,
    answerTables: document.querySelectorAll('table.answer').length,
    answerLeads: [...document.querySelectorAll('p.lead')].filter(p => p.textContent.startsWith('Answer:')).length,
  };
}"""


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("kind", KINDS)
def test_the_report_reads_as_a_page(browser, reports, kind, width):
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors, requests, dialogs = [], [], []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("request", lambda request: requests.append(request.url))
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(reports[kind].resolve().as_uri())
    page.wait_for_load_state("load")
    seen = page.evaluate(MEASURE)
    if folder := os.environ.get("ENSSTAB_SCREENSHOTS"):
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{kind}-{width}px.png"))  # the first screen, as opened
    page.close()
    assert seen["cut"] == [] and not seen["pageScrolls"], seen["cut"][:5]
    assert seen["images"] >= 1 and seen["broken"] == []
    assert errors == [] and dialogs == []
    assert all(url.startswith(("file:", "data:")) for url in requests), [u for u in requests if "://" in u][:3]
    if kind != "sweep":
        # A hostile name is text: shown as written, never an element.
        assert seen["madeOfNames"] == 0 and "<img src=x onerror=alert(" in seen["text"]
        if kind in ("groups", "compare"):
            assert HOSTILE in seen["text"]  # the group's or the selector's name, as written
        if kind == "compare":  # the choice in its sentences, then the pictures and the table
            assert "within one SE of the best accuracy" in seen["text"] and seen["images"] == 2
        else:  # the answer as prose and a table
            assert seen["answerTables"] >= 1 and seen["answerLeads"] >= 1
