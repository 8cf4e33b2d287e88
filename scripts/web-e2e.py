#!/usr/bin/env python3
"""The web app of `engram serve` in a real browser (headless Chromium driven by Selenium).

Usage: web-e2e.py ENGRAM_BINARY [--screenshots DIR] [--turns N] [--json]

Creates a throwaway memory (hashing embedder: no model needed), serves it on a free loopback
port, and in one Chromium session:
  - refuses a foreign Host, the API and the page without the secret, a wrong token and a
    cross-site form POST; the printed address sets the cookie and drops the token;
  - measures the first load (navigation to load event) and the bytes it transferred;
  - chat: sends "remember that my locker code is 4512", presses Confirm, asks "what is my
    locker code" and sees the answer stream in (state events before the reply);
  - memory: finds the memory by typing, forgets it through the confirmation dialog, and checks
    it is gone from search; records each search-as-you-type request's time in the browser;
  - loads every tab at 360 px and at 1280 px (no horizontal overflow);
  - fails on any JavaScript error in the console.
With --turns N the memory first gets N generated conversation turns (`engram ingest`), for the
search figure at scale (scripts/web-bench.sh: 100,000). --screenshots DIR saves a PNG of each tab.
Prints one line per check and `N passed, M failed`; exits 1 on any failure.
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

TABS = ["chat", "memory", "agenda", "insight", "route"]
passed = 0
failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {name}")
    else:
        failed += 1
        print(f"FAIL {name}{': ' + str(detail) if detail else ''}")
    return ok


def percentile(values, fraction):
    ordered = sorted(values)
    if not ordered:
        return None
    index = min(len(ordered) - 1, max(0, int(round(fraction * (len(ordered) - 1)))))
    return ordered[index]


WORDS = ("garden coffee train invoice piano dentist holiday recipe laptop meeting soccer book "
         "museum bicycle budget weather river concert doctor passport camera lunch ticket").split()


def generate_turns(path, count):
    """`count` turns of made-up conversations, 20 per session over the last twelve weeks, one
    JSON object per line: words drawn by Zipf's law from 4,000 made-up words, with the words
    the test types (WORDS) at ranks 10, 40, 90, ... (common to rare, as in real talk)."""
    rng = random.Random(7)
    syllables = "ka lo mi ne su ta ri po an el or ut ve zi da fo gu he".split()
    vocabulary = []
    while len(vocabulary) < 4000:
        word = "".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))
        if word not in vocabulary:
            vocabulary.append(word)
    for index, word in enumerate(WORDS):
        vocabulary.insert(10 * (index + 1) ** 2 - 1, word)
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    step = max(1, 12 * 7 * 86400 // max(1, count))
    start = int(time.time()) - count * step
    with open(path, "w") as out:
        for index in range(count):
            role = "user" if index % 2 == 0 else "assistant"
            text = " ".join(rng.choices(vocabulary, weights, k=rng.randint(8, 20)))
            out.write(json.dumps({
                "role": role, "content": text, "session": f"s{index // 20}",
                "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start + index * step)),
            }) + "\n")


def start_server(binary, db):
    """`engram serve` on a free loopback port: (process, base URL, the URL it printed to open,
    which carries the secret of the launch)."""
    server = subprocess.Popen(
        [binary, "serve", "--db", db, "--http", "127.0.0.1:0"], stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True,
        env={k: v for k, v in os.environ.items() if k != "ENGRAM_MCP_TOKEN"})
    deadline = time.time() + 60
    while time.time() < deadline:
        line = server.stdout.readline()
        if not line:
            break
        found = re.match(r"(http://127\.0\.0\.1:\d+)/\?token=[0-9a-f]{64}$", line.strip())
        if found:
            return server, found.group(1), line.strip()
    server.kill()
    raise SystemExit("web-e2e: engram serve did not print the address to open")


def access_rules(base, entry):
    """The page and the API refuse a foreign Host and requests without the secret; the printed
    address lets a browser in (raw HTTP, before the browser)."""
    import http.client
    import urllib.parse
    parsed = urllib.parse.urlsplit(base)

    def request(method, path, headers=None, body=None):
        connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return response, data

    response, _ = request("GET", "/api/memories", {"Host": f"evil.example:{parsed.port}"})
    check("a foreign Host is refused (421)", response.status == 421, response.status)
    response, _ = request("GET", "/api/memories")
    check("the API without the secret: 401", response.status == 401, response.status)
    response, data = request("GET", "/")
    check("the page without the secret says how to get in", response.status == 401 and b"engram serve" in data,
          response.status)
    token = entry.split("token=", 1)[1]
    response, _ = request("GET", "/?token=" + "0" * 64)
    check("a wrong token is refused", response.status == 401, response.status)
    response, _ = request("GET", "/?token=" + token)
    cookie = response.getheader("Set-Cookie") or ""
    check("the printed address sets an HttpOnly, SameSite=Strict cookie and drops the token",
          response.status == 303 and response.getheader("Location") == "/" and "HttpOnly" in cookie
          and "SameSite=Strict" in cookie, (response.status, cookie))
    response, _ = request("GET", "/api/memories", {"Cookie": cookie.split(";")[0]})
    check("the API with the cookie: 200", response.status == 200, response.status)
    response, _ = request("POST", "/api/forget", {
        "Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded",
        "Cookie": cookie.split(";")[0]}, body="id=1")
    check("a cross-site form POST is refused", response.status == 403, response.status)


def settle(driver, quiet=0.6, limit=30):
    """Waits until no search has answered for `quiet` seconds (typing has settled)."""
    deadline = time.time() + limit
    count = -1
    while time.time() < deadline:
        now = driver.execute_script("return window.engramSearchTimings.length;")
        if now == count:
            return
        count = now
        time.sleep(quiet)


def make_driver():
    options = Options()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--no-first-run", "--disable-extensions", "--window-size=1280,900"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    for candidate in ("/usr/bin/chromium", "/usr/bin/chromium-browser"):
        if os.path.exists(candidate):
            options.binary_location = candidate
    driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    return webdriver.Chrome(service=Service(driver_path), options=options)


def console_errors(driver):
    return [entry for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--screenshots")
    parser.add_argument("--turns", type=int, default=None)
    parser.add_argument("--json", action="store_true")
    # The goals are 200 ms and 50 ms on a quiet machine (scripts/web-bench.sh checks them);
    # `make test` shares two cores with builds, so it asserts a ceiling and reports the figure.
    parser.add_argument("--load-budget-ms", type=float, default=1000)
    parser.add_argument("--search-budget-ms", type=float, default=50)
    args = parser.parse_args()

    folder = tempfile.mkdtemp(prefix="engram-web-")
    db = os.path.join(folder, "memory.sqlite")
    created = subprocess.run([args.binary, "init", "--db", db, "--model", "hashing"], capture_output=True, text=True)
    check("engram init (hashing)", created.returncode == 0, created.stderr)
    if args.turns is None:
        args.turns = 300 if args.screenshots else 0
    if args.turns:
        turns = os.path.join(folder, "turns.jsonl")
        generate_turns(turns, args.turns)
        began = time.time()
        ingested = subprocess.run([args.binary, "ingest", "--db", db, "--format", "jsonl", turns],
                                  capture_output=True, text=True)
        check(f"ingest {args.turns} turns ({time.time() - began:.0f} s)", ingested.returncode == 0, ingested.stderr)
    server, base, entry = start_server(args.binary, db)
    access_rules(base, entry)
    driver = None
    figures = {}
    try:
        driver = make_driver()
        # Results are redrawn as searches answer: a found element may be replaced under the wait.
        wait = WebDriverWait(driver, 30, ignored_exceptions=[StaleElementReferenceException])

        # First load: navigation start to the load event, and every byte it transferred.
        # The cache is off: every file is fetched, as on a first visit (after one visit that
        # starts the browser's renderer, which is not the page's time).
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
        # The printed address: its secret becomes a cookie, and the address bar drops it.
        driver.get(entry)
        wait.until(lambda d: d.execute_script("return document.readyState") == "complete")
        check("the printed address opens the app without the token in the address bar",
              driver.current_url.split("#")[0] == base + "/" and driver.find_elements(By.ID, "tabs"),
              driver.current_url)
        driver.get(base + "/#warm-up")
        wait.until(lambda d: d.execute_script("return document.readyState") == "complete")
        loads = []
        for _ in range(5):  # the median of five: the machine is shared, one load can be unlucky
            driver.get("about:blank")
            driver.get(base + "/")
            wait.until(lambda d: d.execute_script(
                "const n = performance.getEntriesByType('navigation')[0]; return n && n.loadEventEnd > 0;"))
            loads.append(driver.execute_script("""
                const nav = performance.getEntriesByType('navigation')[0];
                const resources = performance.getEntriesByType('resource')
                  .filter((r) => r.initiatorType !== 'fetch' && r.startTime < nav.loadEventEnd);
                const bytes = nav.transferSize + resources.reduce((sum, r) => sum + r.transferSize, 0);
                const body = nav.encodedBodySize + resources.reduce((sum, r) => sum + r.encodedBodySize, 0);
                return {load: nav.loadEventEnd - nav.startTime, bytes, body, files: resources.length + 1};"""))
        timing = sorted(loads, key=lambda entry: entry["load"])[len(loads) // 2]
        figures["first_load_ms"] = round(timing["load"], 1)
        figures["first_load_runs_ms"] = [round(entry["load"], 1) for entry in loads]
        figures["first_load_bytes"] = timing["bytes"]
        figures["first_load_body_bytes"] = timing["body"]
        figures["first_load_files"] = timing["files"]
        check(f"first load (median of 5) {timing['load']:.0f} ms, {timing['files']} files, "
              f"{timing['bytes']} bytes transferred (budget {args.load_budget_ms:.0f} ms)",
              timing["load"] < args.load_budget_ms, figures["first_load_runs_ms"])
        driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": False})

        # Chat: remember with confirmation, then ask.
        driver.execute_script("""
            window.engramEvents = [];
            const original = window.fetch;
            window.fetch = async (...args) => {
              const response = await original(...args);
              if ((response.headers.get('content-type') || '').startsWith('text/event-stream')) {
                const [mine, theirs] = response.body.tee();
                (async () => {
                  const reader = mine.pipeThrough(new TextDecoderStream()).getReader();
                  for (;;) {
                    const { value, done } = await reader.read();
                    if (done) break;
                    for (const m of value.matchAll(/event: (\\w+)/g)) window.engramEvents.push([m[1], performance.now()]);
                  }
                })();
                return new Response(theirs, { status: response.status, headers: response.headers });
              }
              return response;
            };""")
        chat_input = wait.until(EC.element_to_be_clickable((By.ID, "chat-input")))
        chat_input.send_keys("remember that my locker code is 4512", Keys.ENTER)
        wait.until(EC.visibility_of_element_located((By.ID, "chat-pending")))
        pending = driver.find_element(By.ID, "chat-pending-text").text
        check("a pending action waits for Confirm", "4512" in pending, pending)
        driver.find_element(By.ID, "chat-confirm").click()
        wait.until(lambda d: any("remember" in li.text.lower() for li in d.find_elements(By.CSS_SELECTOR, "#chat-log li.agent")))
        check("Confirm stores the memory", True)
        driver.execute_script("window.engramEvents = [];")
        driver.find_element(By.ID, "chat-input").send_keys("what is my locker code", Keys.ENTER)
        answer = wait.until(lambda d: next((li.text for li in d.find_elements(By.CSS_SELECTOR, "#chat-log li.agent")
                                            if "4512" in li.text), None))
        check("the answer names the locker code", "4512" in answer, answer)
        events = driver.execute_script("return window.engramEvents;")
        names = [name for name, _ in events]
        check("the reply streamed in as events (states, then done)",
              len(names) >= 2 and names[-1] == "done" and "state" in names[:-1], names)

        # A reminder, confirmed, shows in the Agenda tab (below).
        driver.find_element(By.ID, "chat-input").send_keys("remind me to call Sam tomorrow at 9", Keys.ENTER)
        wait.until(EC.visibility_of_element_located((By.ID, "chat-pending")))
        driver.find_element(By.ID, "chat-confirm").click()
        wait.until(lambda d: any("Sam" in li.text for li in d.find_elements(By.CSS_SELECTOR, "#chat-log li.agent")))

        # A request of two steps: one confirmation lists both, one click runs both.
        driver.find_element(By.ID, "chat-input").send_keys(
            "please put the chess club on my calendar for Thursday at 7pm, and remind me on Monday at 8 "
            "to return the library books", Keys.ENTER)
        wait.until(EC.visibility_of_element_located((By.ID, "chat-pending")))
        plan_text = driver.find_element(By.ID, "chat-pending-text").text
        check("a plan of two steps asks one confirmation listing both",
              "1." in plan_text and "2." in plan_text and "library books" in plan_text and "chess club" in plan_text,
              plan_text)
        driver.find_element(By.ID, "chat-confirm").click()
        wait.until(lambda d: any("chess club" in li.text.lower() and "library books" in li.text.lower()
                                 for li in d.find_elements(By.CSS_SELECTOR, "#chat-log li.agent")))
        time.sleep(0.5)
        check("one click ran both steps, and nothing else waits", not driver.find_element(By.ID, "chat-pending").is_displayed())

        # Memory: search as you type, forget with confirmation, gone from search.
        driver.find_element(By.ID, "tab-memory").click()
        query = wait.until(EC.element_to_be_clickable((By.ID, "memory-query")))
        driver.execute_script("window.engramSearchTimings = [];")
        for character in "locker code":
            query.send_keys(character)
            time.sleep(0.09)
        settle(driver)

        def memory_hit(d):
            return next((li for li in d.find_elements(By.CSS_SELECTOR, "#memory-results > li[data-kind=memory]")
                         if "4512" in li.text), None)
        hit_text = wait.until(lambda d: memory_hit(d) and memory_hit(d).text)
        check("search finds the memory with its scores", "BM25" in hit_text and "cosine" in hit_text, hit_text)
        wait.until(lambda d: memory_hit(d).find_element(By.XPATH, ".//button[text()='Forget']").click() or True)
        dialog_text = wait.until(EC.visibility_of_element_located((By.ID, "confirm-text"))).text
        check("forget asks first and says what else goes", "4512" in dialog_text, dialog_text)
        driver.find_element(By.ID, "confirm-yes").click()
        wait.until(lambda d: d.find_element(By.ID, "memory-status").text.startswith("Forgot"))
        query.clear()
        query.send_keys("locker code 4512")
        settle(driver)
        leftover = [li.text for li in driver.find_elements(By.CSS_SELECTOR, "#memory-results > li") if "4512" in li.text]
        check("the forgotten memory is gone from search", not leftover, leftover)

        # Search as you type: the browser's time per request.
        words = ["garden", "coffee train", "piano dentist", "holiday", "recipe laptop", "museum ticket"]
        driver.execute_script("window.engramSearchTimings = []; window.engramSearchServerTimings = [];")
        for word in words:
            query.clear()
            for character in word:
                query.send_keys(character)
                time.sleep(0.09)
            time.sleep(0.3)
        timings = driver.execute_script("return window.engramSearchTimings;")
        server_times = driver.execute_script("return window.engramSearchServerTimings;")
        figures["search_server_p50_ms"] = round(percentile(server_times, 0.5) or 0, 1)
        figures["search_server_p95_ms"] = round(percentile(server_times, 0.95) or 0, 1)
        figures["search_requests"] = len(timings)
        figures["search_p50_ms"] = round(percentile(timings, 0.5) or 0, 1)
        figures["search_p95_ms"] = round(percentile(timings, 0.95) or 0, 1)
        check(f"search as you type: {len(timings)} requests, p50 {figures['search_p50_ms']} ms, "
              f"p95 {figures['search_p95_ms']} ms (budget {args.search_budget_ms:.0f} ms)",
              timings and figures["search_p95_ms"] < args.search_budget_ms, timings)

        query.clear()
        query.send_keys("call Sam")
        settle(driver)

        # Every tab at 360 px and 1280 px.
        for width in (360, 1280):
            driver.set_window_size(width, 900)
            for tab in TABS:
                driver.find_element(By.ID, f"tab-{tab}").click()
                panel = wait.until(EC.visibility_of_element_located((By.ID, f"panel-{tab}")))
                if tab == "insight":
                    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#insight-cards .card"))
                    driver.find_element(By.ID, "insight-compaction-run").click()
                    wait.until(lambda d: "Would summarize" in d.find_element(By.ID, "insight-compaction").text)
                if tab == "route":
                    box = driver.find_element(By.ID, "route-input")
                    box.clear()
                    box.send_keys("remind me to call Sam tomorrow at 9", Keys.ENTER)
                    wait.until(lambda d: "reminder.create" in d.find_element(By.ID, "route-result").text)
                if tab == "agenda":
                    wait.until(lambda d: "call Sam" in d.find_element(By.ID, "agenda-days").text)
                overflow = driver.execute_script(
                    "return document.documentElement.scrollWidth - document.documentElement.clientWidth;")
                check(f"{tab} at {width} px fits the width", panel.is_displayed() and overflow <= 0, overflow)
                if args.screenshots and width in (360, 1280):
                    os.makedirs(args.screenshots, exist_ok=True)
                    driver.save_screenshot(os.path.join(args.screenshots, f"{tab}-{width}.png"))

        # Keyboard: arrow keys move between tabs.
        driver.find_element(By.ID, "tab-chat").click()
        driver.find_element(By.ID, "tab-chat").send_keys(Keys.ARROW_RIGHT)
        check("arrow keys move between tabs",
              driver.switch_to.active_element.get_attribute("id") == "tab-memory"
              and driver.find_element(By.ID, "panel-memory").is_displayed())

        errors = console_errors(driver)
        check("no JavaScript errors in the console", not errors, errors)
    except Exception as error:  # a timeout names the step that did not happen
        check("browser session", False, f"{type(error).__name__}: {error}")
        if driver is not None:
            print(driver.get_log("browser"))
    finally:
        if driver is not None:
            driver.quit()
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(folder, ignore_errors=True)
    if args.json:
        print(json.dumps({"turns": args.turns, **figures}))
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
