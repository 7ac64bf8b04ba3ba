"""Browser tests: Playwright (PyPI, the dev extras) driving Debian's chromium (the Makefile's TEST_PACKAGES), never
a browser of Playwright's own download: `make test` puts both on a fresh machine, so CI needs nothing else.

Screenshots go to tests/artifacts/ (ignored by git; PERFKIT_TEST_ARTIFACTS moves it) and their paths are printed."""
import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
VIEWPORT = {"width": 1280, "height": 800}


def chromium_path() -> str:
    found = os.environ.get("PERFKIT_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail("no chromium on PATH: `make test` installs Debian's (as root), or "
                    "`sudo apt-get install chromium`; PERFKIT_CHROMIUM names another Chromium binary")
    return found


@pytest.fixture(scope="session")
def artifacts() -> Path:
    path = Path(os.environ.get("PERFKIT_TEST_ARTIFACTS", ROOT / "tests" / "artifacts"))
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the session; a fresh page (context) per test keeps them apart."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        # Playwright adds --no-sandbox itself (chromiumSandbox defaults to false): needed as root, in CI's containers
        chromium = pw.chromium.launch(executable_path=chromium_path(), headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport=VIEWPORT)
    yield context.new_page()
    context.close()


@pytest.fixture(scope="session")
def lab_for_browser(lab):
    """The integration tests' lab (tests/integration/conftest.py: every service up, S3 on this machine), shared."""
    return lab
