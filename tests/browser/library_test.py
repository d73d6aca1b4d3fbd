#!/usr/bin/env python3
"""Loads a movie from the wall's web panel in headless Chromium.

Opens the panel, waits for the library's card of movie --movie and its
poster, clicks its Load button, and waits until the panel says that movie
plays with its number of frames. Then pauses, drags the slider to the
start, and waits until the live picture is that movie's first frame: the
same pixels as its poster. Prints one JSON line {"movie": ..., "frames":
..., "frame": 0}; exits non-zero, saying why, if any step fails. Run by
tests/receiver/control_room_test.cpp against a live wall.
"""
import argparse
import json
import sys

from selenium.webdriver.common.by import By

from panel_test import browser, drag_slider, text_of, wait

# The pixels of an <img> (a blob URL of our own origin) through a canvas,
# as a string to compare.
PIXELS_JS = """
const img = arguments[0];
if (!img || !img.naturalWidth) return null;
const c = document.createElement('canvas');
c.width = img.naturalWidth; c.height = img.naturalHeight;
const g = c.getContext('2d');
g.drawImage(img, 0, 0);
return c.width + 'x' + c.height + ':' + Array.from(g.getImageData(0, 0, c.width, c.height).data).join(',');
"""


def pixels(driver, element):
    return driver.execute_script(PIXELS_JS, element)


def card(driver, movie):
    for c in driver.find_elements(By.CSS_SELECTOR, ".movie"):
        if c.get_attribute("data-movie") == movie:
            return c
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="the panel, e.g. http://127.0.0.1:7480/")
    parser.add_argument("--movie", required=True, help="the library's movie to load")
    parser.add_argument("--frames", type=int, required=True, help="how many frames it has")
    parser.add_argument("--timeout", type=float, default=60, help="seconds for each step")
    args = parser.parse_args()

    driver = browser()
    try:
        driver.get(args.url)
        # Each step finds its element anew and is retried whole when the
        # panel replaced it in between (a stale element).
        posters = []

        def poster(d):
            c = card(d, args.movie)
            posters.append(c and pixels(d, c.find_element(By.TAG_NAME, "img")))
            return posters[-1] is not None

        wait(driver, f"the library's card of {args.movie} with its poster", poster, args.timeout)
        the_poster = posters[-1]

        def load(d):
            c = card(d, args.movie)
            if c is None:
                return False
            c.find_element(By.CSS_SELECTOR, "button.load").click()
            return True

        wait(driver, f"{args.movie}'s Load button clicked", load, args.timeout)
        wait(driver, f"{args.movie} playing",
             lambda d: text_of(d, "movie") == args.movie
             and text_of(d, "frame-label").endswith(f"/ {args.frames}"), args.timeout)
        driver.find_element(By.ID, "toggle").click()
        wait(driver, "pause", lambda d: text_of(d, "state") == "paused", args.timeout)
        frame = drag_slider(driver, 0)
        wait(driver, "the wall on frame 0",
             lambda d: text_of(d, "frame-label").startswith("frame 0 /") and frame == 0,
             args.timeout)
        wait(driver, f"the live picture of {args.movie}'s first frame (its poster)",
             lambda d: pixels(d, d.find_element(By.ID, "wall-img")) == the_poster, args.timeout)
        print(json.dumps({"movie": text_of(driver, "movie"), "frames": args.frames, "frame": 0}))
    finally:
        driver.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
