"""Headless Chromium through selenium, for the tests that look at a page as a person does (the report, the
leaderboard Space). Skipped without selenium, chromium and chromedriver, unless MMRHUB_REQUIRE_BROWSER=1 (CI),
which makes that a failure. Debian: ``apt-get install -y chromium chromium-driver fonts-wqy-microhei``;
``pip install selenium``."""

import os
import shutil

import pytest

REQUIRED = os.environ.get("MMRHUB_REQUIRE_BROWSER") == "1"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
DRIVER = shutil.which("chromedriver")


def missing() -> str:
    """Why no browser can run here, or ''."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed"
    return "" if CHROMIUM and DRIVER else "no chromium and chromedriver on PATH"


def skip_or_fail(reason: str) -> None:
    """Skip a test that needs what is missing, or fail it where it is required (CI)."""
    (pytest.fail if REQUIRED else pytest.skip)(reason)


def chromium(width: int = 1400, height: int = 2000):
    """A headless Chromium driver that keeps the console's messages (``get_log("browser")``)."""
    reason = missing()
    if reason:
        skip_or_fail(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        f"--window-size={width},{height}",
        "--hide-scrollbars",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # The system driver, named explicitly: selenium would otherwise try to download one.
    return webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
