#!/usr/bin/env python3
"""Screenshots of every page of a running gateway at desktop (1280) and phone (390) widths.

    python3 Tests/Web/screenshots.py http://127.0.0.1:8080 OUTDIR [SONG]

Needs Selenium, chromium and chromium-driver (make deps). SONG (an id) picks the song page;
without it, the first song of the library.
"""
import json
import os
import sys
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service


def shoot(browser, url: str, width: int, path: str) -> None:
    """The whole page at `width` CSS pixels (a phone's device metrics for narrow widths)."""
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 500})
    browser.get(url)
    time.sleep(0.6)
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": min(max(height, 600), 6000), "deviceScaleFactor": 1, "mobile": width < 500})
    time.sleep(0.2)
    browser.save_screenshot(path)


def main() -> None:
    base, out = sys.argv[1].rstrip("/"), sys.argv[2]
    song = sys.argv[3] if len(sys.argv) > 3 else None
    if song is None:
        with urllib.request.urlopen(base + "/api/v1/songs?limit=1&order=newest") as response:
            songs = json.load(response)["songs"]
        song = songs[0]["song"] if songs else None
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars"):
        options.add_argument(argument)
    browser = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    os.makedirs(out, exist_ok=True)
    pages = {"library": "/", "library-range": "/?min_bpm=140&max_bpm=180&octave=true",
             "library-by-artist": "/?order=artist&descending=true&offset=50", "compare": "/compare",
             "playlist": "/playlist?cadence=150&minutes=5", "queue": "/queue", "login": "/login"}
    if song:
        pages["song"] = "/songs/" + song
    try:
        for name, path in pages.items():
            for label, width in (("desktop", 1280), ("phone", 390)):
                shoot(browser, base + path, width, os.path.join(out, f"{name}-{label}.png"))
                print(os.path.join(out, f"{name}-{label}.png"))
    finally:
        browser.quit()


if __name__ == "__main__":
    main()
