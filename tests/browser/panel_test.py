#!/usr/bin/env python3
"""Drives the wall's web panel in headless Chromium, as an operator would.

Opens the panel, waits until it shows the wall playing and a live picture,
clicks Pause, drags the frame slider, and waits until the panel says the
wall is paused on the frame the slider shows. Saves a screenshot and prints
one JSON line: {"frame": the frame dragged to, "lit": the share of the live
picture's pixels that are not black, "colours": how many it has, each the
lesser of a look at rest and one while the panel loads a new picture}.
Exits non-zero, saying why, if any step fails. Run by
tests/receiver/control_room_test.cpp against a live wall.
"""
import argparse
import json
import sys

from selenium import webdriver
from selenium.common.exceptions import (NoSuchElementException, StaleElementReferenceException,
                                        TimeoutException)
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

# The live picture read back through a canvas (it is a blob URL of our own
# origin): the share of its pixels that are not black, and how many
# different colours it has. Bezels alone (dark grey) are a few percent and
# one colour; the test pattern's tiles are about half lit and many colours.
PICTURE_JS = """
const img = document.getElementById('wall-img');
if (img.hidden || !img.naturalWidth) return [0, 0];
const c = document.createElement('canvas');
c.width = img.naturalWidth; c.height = img.naturalHeight;
const g = c.getContext('2d');
g.drawImage(img, 0, 0);
const d = g.getImageData(0, 0, c.width, c.height).data;
let lit = 0;
const colours = new Set();
for (let i = 0; i < d.length; i += 4) {
  if (d[i] + d[i + 1] + d[i + 2] > 30) ++lit;
  colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
}
return [lit / (d.length / 4), colours.size];
"""
LIT_ENOUGH = 0.2  # the tiles are in, not only the bezels


def picture(driver):
    lit, colours = driver.execute_script(PICTURE_JS)
    return lit, colours


def picture_while_refreshing(driver):
    """The picture just after the panel has asked for a new one and set it
    loading: the panel refreshes it every second, and it may never show a
    picture that is still loading (a blank one) meanwhile."""
    lit, colours = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "refreshPicture().then(() => setTimeout(() => done((() => {" + PICTURE_JS + "})()), 0));")
    return lit, colours


def browser():
    options = Options()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1400,1000"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def text_of(driver, element_id):
    return driver.find_element(By.ID, element_id).text


def wait(driver, what, condition, seconds):
    """Waits until condition(driver) is true. The panel re-renders parts of
    itself while it is read (the library's cards, the live picture): an
    element found a moment ago may be gone, so a condition that meets a
    stale element is asked again, as one that finds none yet is."""
    try:
        WebDriverWait(driver, seconds, poll_frequency=0.1,
                      ignored_exceptions=(NoSuchElementException, StaleElementReferenceException)) \
            .until(lambda d: condition(d))
    except TimeoutException:
        error = text_of(driver, "error")
        raise SystemExit(f"panel: {what} not within {seconds} s" + (f" (panel says: {error})" if error else ""))


def drag_slider(driver, share):
    """Drags the slider's thumb from the start to `share` of its width."""
    slider = driver.find_element(By.ID, "slider")
    width = slider.size["width"]
    ActionChains(driver).move_to_element_with_offset(slider, -width // 2 + 4, 0).click_and_hold() \
        .move_by_offset(int(width * share), 0).release().perform()
    return int(slider.get_attribute("value"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="the panel, e.g. http://127.0.0.1:7480/")
    parser.add_argument("--screenshot", required=True, help="PNG file to save the panel to")
    parser.add_argument("--timeout", type=float, default=60, help="seconds for each step")
    args = parser.parse_args()

    driver = browser()
    try:
        driver.get(args.url)
        wait(driver, "the wall playing", lambda d: text_of(d, "state") == "playing", args.timeout)
        wait(driver, "the live picture", lambda d: picture(d)[0] > LIT_ENOUGH, args.timeout)
        driver.find_element(By.ID, "toggle").click()
        wait(driver, "pause", lambda d: text_of(d, "state") == "paused", args.timeout)
        frame = drag_slider(driver, 0.7)
        wait(driver, f"the wall on frame {frame}",
             lambda d: text_of(d, "frame-label").startswith(f"frame {frame} /")
             and text_of(d, "state") == "paused" and not text_of(d, "error"), args.timeout)
        lit, colours = min(picture(driver), picture_while_refreshing(driver))
        driver.save_screenshot(args.screenshot)
        print(json.dumps({"frame": frame, "lit": lit, "colours": colours}))
    finally:
        driver.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
