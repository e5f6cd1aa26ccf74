#!/usr/bin/env python3
"""The dashboard in a real browser: headless Chromium (Selenium and chromedriver, Debian
packages) against the real collatz-server with a real CPU collatz-worker.

The page is opened (with the token, which it keeps in a cookie) before the worker starts;
then, without a reload: the progress bar moves while the submission runs, the delay
records found by the worker appear in the table, the throughput chart shows the search units
and, stacked on them, those of a small stats job, and at the end the CSV link downloads
exactly what `collatzctl server-records` prints. The browser's console must stay free of
errors. With --screenshot PATH the finished page is saved as a PNG (docs/dashboard.png).

Exit status: 0 passed, 1 failed, 77 skipped (no Chromium, chromedriver or Selenium).
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TOKEN = "dash-browser-token"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--window-size=1400,1000"]


def fail(message):
    print("FAIL: " + message, flush=True)
    sys.exit(1)


def wait_for(what, predicate, timeout, interval=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    fail("timed out after %d s waiting for %s" % (timeout, what))


def port_after(log_path, label):
    with open(log_path, encoding="utf-8", errors="replace") as f:
        m = re.search(label + r" \S+ \(port (\d+)\)", f.read())
    return int(m.group(1)) if m else 0


def screenshot(driver, path):
    """The whole page as a PNG (the window is made as tall as the page)."""
    height = driver.execute_script("return document.documentElement.scrollHeight;")
    driver.set_window_size(1400, height + 40)
    time.sleep(0.5)
    driver.save_screenshot(path)
    driver.set_window_size(1400, 1000)
    print("screenshot: " + path, flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--worker", required=True)
    ap.add_argument("--collatzctl", required=True)
    ap.add_argument("--to", default="2^30", help="end of the search (start 1)")
    ap.add_argument("--unit-size", default="2^25")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=120, help="seconds the search may take")
    ap.add_argument("--screenshot", help="save the page here (PNG)")
    ap.add_argument("--screenshot-at", type=float, default=1.0,
                    help="take it when the progress first reaches this fraction (default: at the end)")
    args = ap.parse_args()

    chromium = shutil.which("chromium")
    chromedriver = shutil.which("chromedriver")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common.by import By
        from selenium.common.exceptions import StaleElementReferenceException
    except ImportError:
        webdriver = None
    if not chromium or not chromedriver or webdriver is None:
        print("SKIP: needs Debian's chromium, chromium-driver and python3-selenium (deploy/install-deps.sh)")
        return 77

    work = tempfile.mkdtemp(prefix="dashboard_browser_")
    procs = []
    driver = None
    try:
        token_file = os.path.join(work, "token")
        with open(token_file, "w") as f:
            f.write(TOKEN + "\n")
        server_log = os.path.join(work, "server.log")
        procs.append(subprocess.Popen(
            [args.server, "--db", os.path.join(work, "c.db"), "--listen", "127.0.0.1:0", "--http-listen",
             "127.0.0.1:0", "--token-file", token_file, "--unit-size", args.unit_size, "--lease-seconds", "30", "--double-check", "none"],
            stdout=open(server_log, "w"), stderr=subprocess.STDOUT))
        wait_for("the server", lambda: port_after(server_log, "listening on"), 60)
        grpc = "127.0.0.1:%d" % port_after(server_log, "listening on")
        http = "http://127.0.0.1:%d" % port_after(server_log, "dashboard on")

        def collatzctl(*a):
            r = subprocess.run([args.collatzctl, *a, "--server", grpc, "--token-file", token_file],
                               capture_output=True, text=True, timeout=60)
            if r.returncode != 0:
                fail("collatzctl %s: %s" % (" ".join(a), r.stderr))
            return r.stdout

        collatzctl("submit", "--from", "1", "--to", args.to, "--kinds", "delay,class")
        # A small stats job too: the chart stacks its units on the search units.
        collatzctl("submit", "--kind", "stats", "--from", "0", "--to", str(1 << 20), "--batch", "1024")

        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for flag in CHROMIUM_FLAGS + ["--user-data-dir=" + os.path.join(work, "profile")]:
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(service=Service(chromedriver), options=options)
        downloads = os.path.join(work, "downloads")
        os.makedirs(downloads)
        driver.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})

        # The token once in the address; the page comes back at / with a cookie.
        driver.get(http + "/?token=" + TOKEN)
        if driver.current_url != http + "/":
            fail("the token was not dropped from the address: " + driver.current_url)
        wait_for("the first update", lambda: "ok" == driver.find_element(By.ID, "connection").get_attribute("class"), 20)
        driver.execute_script("window.__same_page = true;")
        delay_rows = lambda: driver.find_elements(By.CSS_SELECTOR, "#delay-records tbody tr td.num:first-child")
        if delay_rows():
            fail("records before any worker ran")
        progress = lambda: float(driver.find_element(By.ID, "progress").get_attribute("aria-valuenow"))
        if progress() != 0:
            fail("progress before any worker ran: %s" % progress())

        for i in range(args.workers):
            procs.append(subprocess.Popen(
                [args.worker, "--server", grpc, "--token-file", token_file, "--backend", "cpu", "--threads", "1",
                 "--spool", os.path.join(work, "spool%d" % i), "--max-idle-seconds", "5", "--log-level", "warn"],
                stdout=open(os.path.join(work, "worker%d.log" % i), "w"), stderr=subprocess.STDOUT))
        seen = []
        deadline = time.monotonic() + args.timeout
        while time.monotonic() < deadline:
            p = progress()
            if not seen or seen[-1] != p:
                seen.append(p)
            if args.screenshot and args.screenshot_at < 1 and p >= args.screenshot_at:
                screenshot(driver, args.screenshot)
                args.screenshot = None
            if p >= 1:
                break
            time.sleep(0.1)
        print("progress values seen: %s" % ", ".join("%.4f" % p for p in seen), flush=True)
        if seen[-1] != 1:
            fail("the submission did not finish: progress %s" % seen[-1])
        if sorted(seen) != seen or len([p for p in seen if 0 < p < 1]) < 2:
            fail("the progress bar did not move step by step: %s" % seen)
        width = driver.find_element(By.ID, "progress-fill").get_attribute("style")
        if "100" not in width:
            fail("the bar is not full at the end: " + width)

        # The records appear without a reload: the same page, the largest delay record in it.
        csv_text = collatzctl("server-records", "--kind", "delay", "--format", "csv")
        last_n = csv_text.strip().splitlines()[-1].split(",")[0]
        wait_for("delay record %s in the table" % last_n,
                 lambda: last_n in [td.text for td in delay_rows()], 20)
        if not driver.execute_script("return window.__same_page === true;"):
            fail("the page was reloaded")
        print("delay records in the table: %d, the last n = %s" % (len(delay_rows()), last_n), flush=True)

        # The CSV link downloads what collatzctl prints.
        driver.find_element(By.ID, "csv-delay").click()
        target = os.path.join(downloads, "delay_records.csv")
        wait_for("the CSV download", lambda: os.path.exists(target) and not any(
            n.endswith(".crdownload") for n in os.listdir(downloads)), 20)
        with open(target) as f:
            downloaded = f.read()
        if downloaded != csv_text:
            fail("the downloaded CSV differs from collatzctl server-records (%d vs %d bytes)" %
                 (len(downloaded), len(csv_text)))
        print("CSV download equals collatzctl server-records (%d lines)" % len(csv_text.splitlines()), flush=True)

        def workers_texts():
            # The page rebuilds the table at each refresh: a row found just before may be gone.
            for _ in range(50):
                try:
                    return [r.text for r in driver.find_elements(By.CSS_SELECTOR, "#workers tbody tr")]
                except StaleElementReferenceException:
                    time.sleep(0.1)
            fail("the workers table was rebuilt under every read")
        workers_rows = workers_texts()
        if len(workers_rows) != args.workers or "cpu" not in workers_rows[0]:
            fail("workers table: %s" % workers_rows)
        # A CPU worker leases no unit above 2^40 (collatz-worker --max-unit-numbers auto).
        if "2^40" not in workers_rows[0]:
            fail("workers table without the CPU worker's unit limit 2^40: %s" % workers_rows[0])
        events = driver.find_element(By.ID, "events").text
        if "delay record n = " + last_n not in events:
            fail("the record is not among the recent events: " + events)
        wait_for("the throughput chart", lambda: driver.find_elements(By.CSS_SELECTOR, "#chart-svg rect.search"), 30)
        wait_for("the stats units in the chart", lambda: driver.find_elements(By.CSS_SELECTOR, "#chart-svg rect.stats"), 40)
        caption = driver.find_element(By.ID, "chart-caption").text
        if "stats units" not in caption:
            fail("the chart's caption does not count the stats units: " + caption)

        # The checks no active worker may take, as collatzctl status counts them.
        blocked = lambda: str(json.loads(collatzctl("status", "--format", "json"))["audits"]["blocked"])
        wait_for("the blocked checks as status counts them",
                 lambda: driver.find_element(By.ID, "audits-blocked").text == blocked(), 20)

        errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        if errors:
            fail("console errors: %s" % errors)
        if args.screenshot:
            screenshot(driver, args.screenshot)
        print("PASS")
        return 0
    finally:
        if driver is not None:
            driver.quit()
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
