"""Regenerate docs/report-sample.png, the README's picture of ``mmrhub report``: the report of the bundled MIPR
sample's two runs, opened in headless Chromium through selenium (the test extra) and screenshot.

Needs chromium and chromedriver on PATH and a CJK font (Debian: ``apt-get install -y chromium chromium-driver
fonts-noto-cjk``). Run from anywhere: ``python scripts/make_report_sample.py [--output PATH]``.
"""

import argparse
import io
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "mipr"
RUNS = [SAMPLE / "baseline" / "simulated_embedding_top50.json", SAMPLE / "baseline" / "simulated_reranker_top50.json"]
WINDOW = (1500, 2300)  # the scores, the plots and the start of the gallery
COLOURS = 256  # a palette PNG: the page is mostly flat colour, so it stays small


def browser():
    """Headless Chromium through the system's chromedriver (selenium would otherwise try to download one)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    driver = shutil.which("chromedriver")
    if not (chromium and driver):
        sys.exit("make_report_sample.py: needs chromium and chromedriver on PATH")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
    ):
        options.add_argument(flag)
    options.add_argument(f"--window-size={WINDOW[0]},{WINDOW[1]}")
    return webdriver.Chrome(service=Service(executable_path=driver), options=options)


def screenshot(page: Path) -> Image.Image:
    """The page's first screen as Chromium draws it."""
    driver = browser()
    try:
        driver.get(page.as_uri())
        return Image.open(io.BytesIO(driver.get_screenshot_as_png())).convert("RGB")
    finally:
        driver.quit()


def main() -> None:
    """Write the report of the bundled sample, screenshot it, save it as a small palette PNG."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "report-sample.png", help="the PNG to write")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        page = Path(folder) / "report.html"
        command = [sys.executable, "-m", "mmrhub.cli", "report", "mipr", *map(str, RUNS), "-o", str(page)]
        subprocess.run([*command, "--queries", "6"], check=True, stdout=subprocess.DEVNULL)
        image = screenshot(page)
    image.quantize(COLOURS, method=Image.Quantize.MEDIANCUT).save(args.output, optimize=True)
    print(f"wrote {args.output} ({args.output.stat().st_size / 1e3:.0f} KB, {image.width}x{image.height})")


if __name__ == "__main__":
    main()
