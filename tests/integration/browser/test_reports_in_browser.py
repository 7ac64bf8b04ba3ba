"""Rendered reports as a reader sees them, in headless Chromium at 1280x800 (issue 24, item 5).

Every report folder under the reports root (PERFKIT_REPORTS, else reports/) is checked by its newest page, the one
the index leads to; with none there (CI's fresh machine) one small HDFS vs S3 report is rendered on the lab first.
A report answers first (DESIGN, principle 12): its first output is `<section class="perfkit-findings">`, and the
section's top must be on the first screen. Output styled as stderr is allowed only in a report that recorded a
failure, and every figure must have loaded (an <img> whose naturalWidth is 0 is a broken figure)."""
import json
from pathlib import Path

import pytest

from perfkit.paths import reports_dir


RENDER_HERE = "rendered-here"


def _newest_pages() -> list[Path]:
    root = reports_dir()
    pages = []
    for folder in sorted(p for p in root.glob("*") if p.is_dir() and not p.name.startswith(".")):
        if found := sorted(folder.glob("*.html")):  # named by their UTC start time: the last is the newest
            pages.append(found[-1])
    return pages


def _params():
    pages = _newest_pages()
    if pages:
        return [pytest.param(p, id=f"{p.parent.name}/{p.name}") for p in pages]
    return [pytest.param(RENDER_HERE, id=RENDER_HERE, marks=pytest.mark.lab)]


def _render_one_small(tmp_path, monkeypatch) -> Path:
    """The HDFS vs S3 report at its smallest through Trino alone: the notebook every study starts from, in ~1 min."""
    from perfkit.report import render

    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path / "results"))
    params = {"rows": 5_000, "files": 2, "runs": 2, "warmup": 0, "engines": ["trino"], "queries": ["q1", "q3"],
              "copy_methods": ["stream"]}
    return render(Path(__file__).resolve().parents[3] / "notebooks" / "hdfs_vs_s3_queries.ipynb", params,
                  out_root=tmp_path / "reports").html


def _recorded_failure(html: Path) -> bool:
    """The executed notebook beside the page says whether the run failed (metadata.perfkit.ok)."""
    executed = html.with_suffix(".ipynb")
    if not executed.exists():
        return False
    return json.loads(executed.read_text()).get("metadata", {}).get("perfkit", {}).get("ok") is False


@pytest.mark.parametrize("html", _params())
def test_a_report_answers_on_its_first_screen_with_no_stderr_and_every_figure_loaded(
        html, page, artifacts, request, tmp_path, monkeypatch):
    if html == RENDER_HERE:
        request.getfixturevalue("lab_for_browser")
        html = _render_one_small(tmp_path, monkeypatch)
    page.goto(html.as_uri(), wait_until="load")  # images are embedded (data: URIs): loaded with the page

    shot = artifacts / "reports" / f"{html.parent.name}-{html.stem}.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shot))  # the first screen, as a reader opening the page sees it
    print(f"first screen of {html}: {shot}")

    findings = page.locator("section.perfkit-findings")
    if findings.count() == 0:
        pytest.skip(f"{html} predates the Findings section (no section.perfkit-findings): render it again")
    box = findings.first.bounding_box()
    assert box is not None, f"{html}: the Findings section is hidden"
    screen = page.viewport_size["height"]
    assert 0 <= box["y"] < screen, \
        f"{html}: the Findings section starts {box['y']:.0f} px down, below the first screen ({screen} px)"

    if not _recorded_failure(html):
        stderr = page.locator('[data-mime-type="application/vnd.jupyter.stderr"]').all_inner_texts()
        assert not stderr, f"{html}: a run that recorded no failure shows stderr-styled output: " + \
            " | ".join(text.strip()[:200] for text in stderr[:5])

    images = page.evaluate("""() => Array.from(document.images).map(img => ({
        src: img.src.slice(0, 60), loaded: img.complete && img.naturalWidth > 0}))""")
    broken = [img["src"] for img in images if not img["loaded"]]
    assert not broken, f"{html}: {len(broken)} of {len(images)} figures did not load: {broken}"
