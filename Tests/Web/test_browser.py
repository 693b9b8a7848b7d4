"""The pages in a real browser: Debian's chromium, driven through chromium-driver by Selenium
(python3-selenium), against a real `tactus serve` with its web gateway.

Load the library, filter a BPM range, open a song and see its figure, build a playlist and
download its M3U8, upload a file and see it finish, watch the queue page update. With
TACTUS_SCREENSHOTS=DIR, every page is also saved at desktop (1280) and phone (390) widths.

Run by `make test`; skipped, saying why, where Selenium is missing or Chromium cannot start.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time
import unittest
from pathlib import Path

import webserver

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as conditions
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError as missing:  # pragma: no cover - reported as a skip
    webdriver = None
    NO_SELENIUM = f"Selenium is not installed for {os.sys.executable} ({missing}): make deps installs python3-selenium"
else:
    NO_SELENIUM = None


def chromium():
    """A headless Chromium, or the reason it cannot start."""
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver") or ("/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver") else None)
    if binary is None or driver is None:
        return None, "chromium and chromium-driver are not installed (make deps installs them)"
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(argument)
    downloads = tempfile.mkdtemp(prefix="tactus-downloads-")
    options.add_experimental_option("prefs", {"download.default_directory": downloads, "download.prompt_for_download": False})
    try:
        browser = webdriver.Chrome(service=Service(driver), options=options)
    except Exception as error:  # noqa: BLE001 - any failure to start is the reason to skip
        return None, f"Chromium cannot start here: {str(error).splitlines()[0]}"
    browser.downloads = downloads
    return browser, None


@unittest.skipIf(NO_SELENIUM is not None, NO_SELENIUM or "")
@unittest.skipIf(webserver.binary() is None, "no tactus binary: build it (swift build) or set TACTUS_BINARY")
class BrowserTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.browser, reason = chromium()
        if cls.browser is None:
            raise unittest.SkipTest(reason)
        cls.server = webserver.WebServer()
        cls.songs = Path(tempfile.mkdtemp(prefix="tactus-browser-songs-"))
        cls.ids = {}
        for bpm in (96, 150):
            answer = cls.server.upload(webserver.click_track(cls.songs / f"click-{bpm}.wav", bpm))
            cls.ids[bpm] = answer["song"]
        for song in cls.ids.values():
            cls.server.wait(song)
        cls.screenshots = os.environ.get("TACTUS_SCREENSHOTS")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.browser.quit()
        cls.server.stop()

    def open(self, path: str):
        self.browser.get(self.server.url + path)
        return self.browser

    def wait(self, condition, seconds: float = 30):
        return WebDriverWait(self.browser, seconds).until(condition)

    def shoot(self, name: str) -> None:
        """Saves the page at desktop and phone widths, whole height, when TACTUS_SCREENSHOTS is set."""
        if not self.screenshots:
            return
        os.makedirs(self.screenshots, exist_ok=True)
        for label, width in (("desktop", 1280), ("phone", 390)):
            self.browser.set_window_size(width, 900)
            height = self.browser.execute_script("return document.documentElement.scrollHeight")
            self.browser.set_window_size(width, min(max(height + 100, 600), 6000))
            time.sleep(0.2)
            self.browser.save_screenshot(os.path.join(self.screenshots, f"{name}-{label}.png"))
        self.browser.set_window_size(1280, 900)

    def test_1_library_filter_and_song_figure(self) -> None:
        browser = self.open("/")
        rows = browser.find_elements(By.CSS_SELECTOR, "#songs tbody tr")
        self.assertEqual(2, len(rows))
        self.assertIn("Tempo histogram of all 2 songs of the search", browser.page_source)
        self.shoot("library")
        # Filter a BPM range with the form, by keyboard.
        browser.find_element(By.NAME, "min_bpm").send_keys("140")
        maximum = browser.find_element(By.NAME, "max_bpm")
        maximum.send_keys("160")
        maximum.submit()
        self.wait(conditions.title_contains("140"))
        rows = browser.find_elements(By.CSS_SELECTOR, "#songs tbody tr")
        self.assertEqual(1, len(rows))
        self.assertIn("click-150.wav", rows[0].text)
        self.shoot("library-range")
        # Sort by a column, then open the song.
        browser.find_element(By.LINK_TEXT, "Title").click()
        self.wait(conditions.url_contains("order=title"))
        self.assertEqual("ascending", browser.find_element(By.XPATH, "//th[a[text()='Title']]").get_attribute("aria-sort"))
        rows = browser.find_elements(By.CSS_SELECTOR, "#songs tbody tr")
        rows[0].find_element(By.CSS_SELECTOR, "a.title").click()
        self.wait(conditions.url_contains("/songs/" + self.ids[150]))
        figure = browser.find_element(By.CSS_SELECTOR, ".figure svg")
        self.assertGreater(figure.size["width"], 300)
        self.assertIn("comb-filter", browser.find_element(By.TAG_NAME, "table").text)
        self.shoot("song")

    def test_1b_columns_sort_every_song_not_only_the_page(self) -> None:
        """One song a page: a column sorts the whole library, so the song first by that column
        comes to page 1 even when it was on page 2, and Next goes on in the same order."""
        def shown(browser) -> list:
            return [row.find_element(By.CSS_SELECTOR, "a.title").text for row in browser.find_elements(By.CSS_SELECTOR, "#songs tbody tr")]

        browser = self.open("/?limit=1")
        self.assertEqual(["click-150.wav"], shown(browser))  # newest first
        self.assertIn("Page 1 of 2", browser.page_source)
        browser.find_element(By.LINK_TEXT, "Title").click()
        self.wait(conditions.url_contains("order=title"))
        self.assertEqual(["click-150.wav"], shown(browser))
        # Again: Z to A over every song, so page 1 now holds the song that was on page 2.
        browser.find_element(By.LINK_TEXT, "Title").click()
        self.wait(conditions.url_contains("descending=true"))
        self.assertEqual("descending", browser.find_element(By.XPATH, "//th[a[text()='Title']]").get_attribute("aria-sort"))
        self.assertEqual(["click-96.wav"], shown(browser))
        self.assertIn("by title, Z to A", browser.page_source)
        self.shoot("library-sorted")
        browser.find_element(By.PARTIAL_LINK_TEXT, "Next").click()
        self.wait(conditions.url_contains("offset=1"))
        self.assertEqual(["click-150.wav"], shown(browser))
        self.assertEqual("descending", browser.find_element(By.XPATH, "//th[a[text()='Title']]").get_attribute("aria-sort"))
        self.assertIn("Page 2 of 2", browser.page_source)
        # Another column starts again at page 1, slowest first.
        browser.find_element(By.LINK_TEXT, "Tempo (BPM)").click()
        self.wait(conditions.url_contains("order=bpm"))
        self.assertNotIn("offset=", browser.current_url)
        self.assertEqual(["click-96.wav"], shown(browser))
        browser.find_element(By.LINK_TEXT, "Tempo (BPM)").click()
        self.wait(conditions.url_contains("descending=true"))
        self.assertEqual(["click-150.wav"], shown(browser))

    def test_2_playlist_and_its_m3u8(self) -> None:
        browser = self.open("/playlist")
        cadence = browser.find_element(By.NAME, "cadence")
        cadence.clear()
        cadence.send_keys("150")
        minutes = browser.find_element(By.NAME, "minutes")
        minutes.clear()
        minutes.send_keys("0.2")
        minutes.submit()
        link = self.wait(conditions.presence_of_element_located((By.LINK_TEXT, "Download M3U8")))
        self.assertIn("click-150.wav", browser.find_element(By.CSS_SELECTOR, "table").text)
        self.shoot("playlist")
        link.click()
        deadline = time.monotonic() + 20
        files = []
        while time.monotonic() < deadline:
            files = [name for name in os.listdir(browser.downloads) if name.endswith(".m3u8")]
            if files:
                break
            time.sleep(0.2)
        self.assertEqual(1, len(files), os.listdir(browser.downloads))
        text = Path(browser.downloads, files[0]).read_text(encoding="utf-8")
        self.assertTrue(text.startswith("#EXTM3U\n"))
        # Uploaded songs have no path a player could open: the file names them in a comment, and the page says so.
        omitted = [line for line in text.splitlines() if line.startswith("# not listed: song " + self.ids[150][:8])]
        self.assertEqual(1, len(omitted), text)
        self.assertIn("(click-150.wav)", omitted[0])
        self.assertIn("None of these songs has a file under the server's library roots", browser.page_source)

    def test_2b_playlist_follows_a_workout(self) -> None:
        """A watch's TCX chosen in the page's second form: two minutes at 75 strides per minute
        (150 steps) become a profile, and the page shows its playlist."""
        points = "".join(
            f"<Trackpoint><Time>2024-05-01T07:{30 + second // 60:02d}:{second % 60:02d}Z</Time>"
            f"<HeartRateBpm><Value>150</Value></HeartRateBpm><Cadence>75</Cadence></Trackpoint>" for second in range(120))
        workout = self.songs / "run.tcx"
        workout.write_text('<?xml version="1.0"?><TrainingCenterDatabase '
                           'xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2"><Activities>'
                           f'<Activity Sport="Running"><Lap><Track>{points}</Track></Lap></Activity></Activities>'
                           '</TrainingCenterDatabase>')
        browser = self.open("/playlist")
        form = browser.find_element(By.ID, "follow")
        form.find_element(By.NAME, "workout").send_keys(str(workout))
        form.submit()
        self.wait(lambda b: "profile=" in b.current_url)
        self.assertIn("s%40150.0", browser.current_url)
        self.wait(conditions.presence_of_element_located((By.CSS_SELECTOR, "table")))
        self.assertIn("click-150.wav", browser.find_element(By.CSS_SELECTOR, "table").text)
        # A file that is no workout: the page says why, naming it.
        broken = self.songs / "broken.gpx"
        broken.write_text("<gpx><trk><trkseg><trkpt><time>yesterday</time></trkpt></trkseg></trk></gpx>")
        browser = self.open("/playlist")
        form = browser.find_element(By.ID, "follow")
        form.find_element(By.NAME, "workout").send_keys(str(broken))
        form.submit()
        error = self.wait(conditions.visibility_of_element_located((By.ID, "follow-error")))
        self.assertIn("broken.gpx: not a readable GPX workout", error.text)

    def test_3_upload_and_watch_the_queue(self) -> None:
        browser = self.open("/queue")
        self.wait(lambda b: "on" in b.find_element(By.ID, "live").get_attribute("class"))
        self.shoot("queue")
        song = webserver.click_track(self.songs / "click-132.wav", 132)
        browser.find_element(By.ID, "files").send_keys(str(song))
        finished = self.wait(conditions.presence_of_element_located((By.CSS_SELECTOR, "#uploads .finished")), 180)
        self.assertIn("BPM", finished.text)
        # The queue updated from the events: jobs finished here, and the events list.
        finished_cells = browser.find_elements(By.CSS_SELECTOR, "#detectors td[data-field=done]")
        self.assertGreater(sum(int(cell.text or 0) for cell in finished_cells), 0)
        self.assertIn("song", browser.find_element(By.ID, "events").text)
        self.shoot("queue-after-upload")
        browser.find_element(By.CSS_SELECTOR, "#uploads a").click()
        self.wait(conditions.presence_of_element_located((By.CSS_SELECTOR, ".figure svg")))

    def test_3b_scripts_show_control_characters_escaped(self) -> None:
        """The pages' scripts show worker ids, error messages and file names through
        tactusShown, which escapes as the server-side pages and the CLI do (ShownText)."""
        browser = self.open("/queue")
        hostile = "a\x1bb\x7fc\x85d\u200ee\u202ef\u2066g\nh \u00e9\u2713"
        shown = browser.execute_script("return tactusShown(arguments[0])", hostile)
        self.assertEqual("a\\x1Bb\\x7Fc\\x85d\\u{200E}e\\u{202E}f\\u{2066}g\\x0Ah \u00e9\u2713", shown)

    def test_4_compare_page(self) -> None:
        browser = self.open("/compare")
        self.assertIn("Agreement between detectors", browser.page_source)
        self.shoot("compare")


if __name__ == "__main__":
    unittest.main()
