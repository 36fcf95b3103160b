#!/usr/bin/env python3
"""Checks the static HTML report written by `trellis-lab report RESULTS_ROOT` in a real
headless Chromium, driven over the Chrome DevTools Protocol (no Playwright/Puppeteer).

    scripts/check_report.py RESULTS_ROOT SCREENSHOT [--page-timeout 30] [--total-timeout 600]

Usually run through scripts/check_report.sh, which installs Chromium and websocket-client first.

Starting at RESULTS_ROOT/index.html it crawls, through file:// URLs, every .html page inside
RESULTS_ROOT reachable by <a href> links. For each page it fails on: a navigation error, no load
event within the page timeout, console errors/warnings, uncaught exceptions, Log errors, failed
network loads, images that did not load (not complete or naturalWidth 0), an empty <title>, and
<a href> links to local files that do not exist (other targets -- .parquet, .json, .png, .svg,
... -- are checked to exist but not opened; a .parquet must start and end with PAR1), and
same-page #fragment links without a target. Links to http(s)/mailto etc. are not checked.

It writes a full-page PNG screenshot of the index (1280 px wide) to SCREENSHOT, prints one line
per page (OK, or FAIL with the reasons) and a summary
"N pages, M images, K links checked: PASS|FAIL", and exits 0 on PASS, 1 on FAIL, 2 if the check
could not run (no index.html, Chromium would not start, time limit hit). Chromium is always
killed at the end, also on Ctrl-C or SIGTERM. Set CHROMIUM=/path/to/binary to choose the browser.
"""

import argparse
import base64
import collections
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

try:
    import websocket  # websocket-client
except ImportError:
    print("check_report.py: needs the Python package websocket-client "
          "(python3 -m pip install websocket-client), or run scripts/check_report.sh",
          file=sys.stderr)
    sys.exit(2)

VIEWPORT_WIDTH = 1280
VIEWPORT_HEIGHT = 900
MAX_SCREENSHOT_HEIGHT = 16000  # Chromium cannot capture much more than 16384 px in one go
SETTLE_SECONDS = 0.3           # after the load event, for late console messages / image loads
HTML_EXTS = {".html", ".htm", ".xhtml"}


class CheckError(Exception):
    """The check itself could not run (as opposed to the report failing it)."""


class Timeout(CheckError):
    """A page's own deadline passed."""


class RunTimeout(CheckError):
    """The whole run's deadline (--total-timeout) passed."""


# ---------------------------------------------------------------------------------------------
# Chromium process
# ---------------------------------------------------------------------------------------------

def find_chromium():
    explicit = os.environ.get("CHROMIUM")
    if explicit:
        return explicit
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    raise CheckError("no Chromium found (tried chromium, chromium-browser, google-chrome); "
                     "install it with: apt-get install -y chromium, or set CHROMIUM=/path")


class Chromium:
    """A headless Chromium in its own process group with a throw-away profile."""

    def __init__(self, binary, start_timeout):
        self.binary = binary
        self.start_timeout = start_timeout
        self.proc = None
        self.profile = None
        self.stderr_path = None

    def start(self):
        self.profile = tempfile.mkdtemp(prefix="check_report_chromium_")
        self.stderr_path = os.path.join(self.profile, "chromium_stderr.log")
        # Port 0: Chromium picks a free port itself and writes it to DevToolsActivePort in the
        # profile, so there is no race between choosing a free port and binding it.
        args = [
            self.binary,
            "--headless=new",
            "--no-sandbox",  # we run as root
            "--disable-gpu",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            "--user-data-dir=" + self.profile,
            f"--window-size={VIEWPORT_WIDTH},{VIEWPORT_HEIGHT}",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-default-apps",
            "--disable-dev-shm-usage",
            "--mute-audio",
            "--hide-scrollbars",
            "--renderer-process-limit=2",
            "about:blank",
        ]
        with open(self.stderr_path, "wb") as err:
            try:
                self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=err,
                                             start_new_session=True)
            except OSError as e:
                raise CheckError(f"cannot start Chromium ({self.binary}): {e}") from e
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise CheckError(f"Chromium exited with code {self.proc.returncode} at start:\n"
                                 + self.stderr_tail())
            try:
                with open(port_file) as f:
                    first = f.readline().strip()
                if first.isdigit():
                    return self.browser_ws_url(int(first), deadline)
            except FileNotFoundError:
                pass
            time.sleep(0.1)
        raise CheckError(f"Chromium did not open its DevTools port within {self.start_timeout} s:\n"
                         + self.stderr_tail())

    def browser_ws_url(self, port, deadline):
        url = f"http://127.0.0.1:{port}/json/version"
        last = None
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(url, timeout=5) as r:
                    info = json.load(r)
                self.version = info.get("Browser", "?")
                return info["webSocketDebuggerUrl"]
            except (OSError, ValueError, KeyError) as e:
                last = e
                time.sleep(0.2)
        raise CheckError(f"no answer from {url}: {last}\n" + self.stderr_tail())

    def stderr_tail(self, lines=15):
        try:
            with open(self.stderr_path, errors="replace") as f:
                tail = f.read().splitlines()[-lines:]
        except OSError:
            tail = []
        return "\n".join("  chromium: " + line for line in tail) or "  (no output from Chromium)"

    def stop(self, grace=0.0):
        """Waits up to `grace` s for Chromium to quit by itself, then kills its process group."""
        if self.proc is not None and grace > 0:
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                pass
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(timeout=5)
        if self.proc is not None:
            # Helpers (zygote, renderers) share the group; make sure none outlives the browser.
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self.profile:
            shutil.rmtree(self.profile, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# DevTools protocol over one browser-level websocket, with a flattened page session
# ---------------------------------------------------------------------------------------------

class Cdp:
    def __init__(self, ws_url, run_deadline):
        self.run_deadline = run_deadline
        self.ws = websocket.create_connection(ws_url, timeout=10, suppress_origin=True,
                                              enable_multithread=False)
        self.next_id = 0
        self.events = collections.deque()
        self.session = None
        self.target_id = None

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass

    def close_browser(self):
        """Asks Chromium to quit, so that it reaps its own helper processes (best effort)."""
        try:
            self.session = None
            self.run_deadline = max(self.run_deadline, time.monotonic() + 3)
            self.send("Browser.close", deadline=time.monotonic() + 3, session=False)
            return True
        except Exception:
            return False

    def _recv(self, deadline):
        run_bound = self.run_deadline <= deadline
        remaining = min(deadline, self.run_deadline) - time.monotonic()
        if remaining <= 0:
            raise RunTimeout("timed out") if run_bound else Timeout("timed out")
        self.ws.settimeout(remaining)
        try:
            return json.loads(self.ws.recv())
        except websocket.WebSocketTimeoutException as e:
            raise (RunTimeout("timed out") if run_bound else Timeout("timed out")) from e
        except websocket.WebSocketConnectionClosedException as e:
            raise CheckError("the DevTools connection closed (did Chromium crash?)") from e

    def send(self, method, params=None, deadline=None, session=True):
        """Sends a command and returns its result; events that arrive meanwhile are queued."""
        if deadline is None:
            deadline = time.monotonic() + 30
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        self.ws.send(json.dumps(msg))
        while True:
            m = self._recv(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise CheckError(f"{method} failed: {m['error'].get('message')}")
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def next_event(self, deadline):
        if self.events:
            return self.events.popleft()
        m = self._recv(deadline)
        return m if "method" in m else None

    def open_page(self):
        """Opens a fresh tab (closing the previous one, which may hang) and attaches to it."""
        if self.target_id:
            self.session = None
            try:
                self.send("Target.closeTarget", {"targetId": self.target_id},
                          deadline=time.monotonic() + 10, session=False)
            except Timeout:
                pass
        self.events.clear()
        target = self.send("Target.createTarget", {"url": "about:blank", "newWindow": True},
                           session=False)
        self.target_id = target["targetId"]
        attached = self.send("Target.attachToTarget",
                             {"targetId": target["targetId"], "flatten": True}, session=False)
        self.session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(domain + ".enable")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": VIEWPORT_WIDTH, "height": VIEWPORT_HEIGHT,
                   "deviceScaleFactor": 1, "mobile": False})

    def evaluate(self, expression, deadline, await_promise=False):
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                           "awaitPromise": await_promise}, deadline=deadline)
        if "exceptionDetails" in r:
            raise CheckError("evaluation failed: " + describe_exception(r["exceptionDetails"]))
        return r.get("result", {}).get("value")


def describe_exception(d):
    exc = d.get("exception") or {}
    text = exc.get("description") or d.get("text") or "exception"
    where = d.get("url") or ""
    if where:
        where = f" at {short_url(where)}:{d.get('lineNumber', 0) + 1}"
    return text.splitlines()[0] + where


# ---------------------------------------------------------------------------------------------
# Crawling
# ---------------------------------------------------------------------------------------------

ROOT = None  # realpath of RESULTS_ROOT


def short_url(url):
    """A file:// URL inside RESULTS_ROOT as a path relative to it, else the URL unchanged."""
    p = url_to_path(url)
    if p is not None and ROOT is not None:
        rp = os.path.realpath(p)
        if rp == ROOT or rp.startswith(ROOT + os.sep):
            return os.path.relpath(rp, ROOT)
    return url


def url_to_path(url):
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "file":
        return None
    return urllib.parse.unquote(parts.path)


def inside_root(path):
    rp = os.path.realpath(path)
    return rp == ROOT or rp.startswith(ROOT + os.sep)


# Run in the page after load: makes lazy images load, waits for every image to settle (at most
# 5 s), then reports what the page holds.
PAGE_REPORT_JS = r"""
(async () => {
  const imgs = Array.from(document.images);
  for (const i of imgs) { if (i.loading === 'lazy') i.loading = 'eager'; }
  await Promise.race([
    Promise.all(imgs.map(i => i.decode().catch(() => null))),
    new Promise(r => setTimeout(r, 5000)),
  ]);
  const ids = new Set(Array.from(document.querySelectorAll('[id]')).map(e => e.id));
  for (const a of document.querySelectorAll('a[name]')) ids.add(a.name);
  return {
    title: document.title,
    readyState: document.readyState,
    images: imgs.map(i => i.currentSrc || i.src),
    brokenImages: imgs.filter(i => !i.complete || i.naturalWidth === 0)
                      .map(i => i.currentSrc || i.src || i.getAttribute('src') || '(no src)'),
    links: Array.from(document.querySelectorAll('a[href]'))
                .map(a => ({href: a.href, raw: a.getAttribute('href')})),
    ids: Array.from(ids),
    scripts: document.scripts.length,
  };
})()
"""


def check_link_target(path, reasons):
    """Checks a linked non-page file exists (and a .parquet looks like one). Returns ok."""
    if not os.path.exists(path):
        return False
    if path.lower().endswith(".parquet") and os.path.isfile(path):
        try:
            size = os.path.getsize(path)
            with open(path, "rb") as f:
                head = f.read(4)
                f.seek(max(0, size - 4))
                tail = f.read(4)
            if size < 12 or head != b"PAR1" or tail != b"PAR1":
                reasons.append(f"not a Parquet file (no PAR1 magic): {short_url('file://' + path)}")
        except OSError as e:
            reasons.append(f"cannot read {path}: {e}")
    return True


def check_page(cdp, url, page_timeout):
    """Loads one page; returns (reasons, info) where info is the page report (or None)."""
    deadline = time.monotonic() + page_timeout
    reasons = []
    notes = []
    requests = {}
    cdp.events.clear()
    try:
        nav = cdp.send("Page.navigate", {"url": url}, deadline=deadline)
    except Timeout:
        return [f"navigation did not answer within {page_timeout:g} s"], notes, None
    if nav.get("errorText"):
        return [f"navigation failed: {nav['errorText']}"], notes, None
    loaded = False
    settle_until = None

    def handle(ev):
        nonlocal loaded, settle_until
        method, p = ev.get("method"), ev.get("params", {})
        if ev.get("sessionId") not in (None, cdp.session):
            return
        if method == "Page.loadEventFired":
            loaded = True
            settle_until = time.monotonic() + SETTLE_SECONDS
        elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            reasons.append(f"console.{p['type']}: {text}")
        elif method == "Runtime.exceptionThrown":
            reasons.append("uncaught exception: " + describe_exception(p.get("exceptionDetails", {})))
        elif method == "Log.entryAdded":
            e = p.get("entry", {})
            where = f" ({short_url(e['url'])})" if e.get("url") else ""
            if e.get("level") == "error":
                reasons.append(f"log {e.get('source', '')} error: {e.get('text', '')}{where}")
            elif e.get("level") == "warning":
                notes.append(f"log {e.get('source', '')} warning: {e.get('text', '')}{where}")
        elif method == "Network.requestWillBeSent":
            requests[p.get("requestId")] = p.get("request", {}).get("url", "?")
        elif method == "Network.loadingFailed" and not p.get("canceled"):
            what = short_url(requests.get(p.get("requestId"), "?"))
            reasons.append(f"failed to load {what}: {p.get('errorText', '')}")

    try:
        while not loaded or time.monotonic() < settle_until:
            wait_until = deadline if not loaded else min(deadline, settle_until)
            try:
                ev = cdp.next_event(wait_until)
            except Timeout:
                if not loaded:
                    reasons.append(f"no load event within {page_timeout:g} s")
                    return reasons, notes, None
                break  # settled
            if ev:
                handle(ev)
        info = cdp.evaluate(PAGE_REPORT_JS, deadline, await_promise=True)
        # Events that arrived while the page report ran (late image failures, etc.).
        while cdp.events:
            handle(cdp.events.popleft())
    except Timeout:
        reasons.append(f"page did not finish within {page_timeout:g} s")
        return reasons, notes, None
    if not (info.get("title") or "").strip():
        reasons.append("empty or missing <title>")
    for src in info.get("brokenImages", []):
        reasons.append(f"image did not load: {short_url(src)}")
    return reasons, notes, info


def main():
    global ROOT
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results_root")
    ap.add_argument("screenshot")
    ap.add_argument("--page-timeout", type=float, default=30.0, help="seconds per page (30)")
    ap.add_argument("--total-timeout", type=float, default=600.0,
                    help="seconds for the whole run, Chromium start included (600)")
    ap.add_argument("--max-pages", type=int, default=2000, help="stop crawling after this many")
    args = ap.parse_args()

    ROOT = os.path.realpath(args.results_root)
    index = os.path.join(ROOT, "index.html")
    if not os.path.isfile(index):
        print(f"check_report: {index} does not exist (run: trellis-lab report {args.results_root})",
              file=sys.stderr)
        return 2

    # SIGTERM/SIGHUP behave like Ctrl-C so the finally blocks below kill Chromium.
    def on_signal(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started with it ignored
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)

    t0 = time.monotonic()
    run_deadline = t0 + args.total_timeout
    browser = None
    cdp = None
    try:
        browser = Chromium(find_chromium(), start_timeout=min(30.0, args.total_timeout))
        ws_url = browser.start()
        print(f"check_report: {browser.version}, DevTools at {ws_url.split('/devtools')[0]}, "
              f"started in {time.monotonic() - t0:.1f} s")
        cdp = Cdp(ws_url, run_deadline)
        cdp.open_page()

        queue = collections.deque([index])
        seen = {index}
        pages = images = links_checked = external = 0
        failed_pages = 0
        missing_targets = set()
        shot_written = False
        while queue:
            if pages >= args.max_pages:
                print(f"check_report: stopped after --max-pages {args.max_pages} pages; "
                      f"{len(queue)} not checked")
                failed_pages += 1
                break
            path = queue.popleft()
            url = "file://" + urllib.parse.quote(path)
            rel = os.path.relpath(path, ROOT)
            t_page = time.monotonic()
            reasons, notes, info = check_page(cdp, url, args.page_timeout)
            if info is None:
                cdp.open_page()  # the page may still hang: give the next one a fresh tab
            pages += 1
            if info is not None:
                images += len(info.get("images", []))
                ids = set(info.get("ids", []))
                for link in info.get("links", []):
                    href, raw = link.get("href", ""), link.get("raw", "")
                    parts = urllib.parse.urlsplit(href)
                    if parts.scheme != "file":
                        if parts.scheme in ("http", "https", "mailto", "ftp", "data", "tel"):
                            external += 1
                        else:
                            reasons.append(f"link with unexpected scheme: {raw}")
                        continue
                    links_checked += 1
                    target = urllib.parse.unquote(parts.path)
                    if os.path.realpath(target) == os.path.realpath(path):
                        if parts.fragment and urllib.parse.unquote(parts.fragment) not in ids:
                            reasons.append(f"link to missing anchor: {raw}")
                        continue
                    ext = os.path.splitext(target)[1].lower()
                    if ext in HTML_EXTS and inside_root(target):
                        real = os.path.realpath(target)
                        if not os.path.isfile(real):
                            reasons.append(f"broken link: {raw} (no such file)")
                            missing_targets.add(target)
                        elif real not in seen:
                            seen.add(real)
                            queue.append(real)
                        continue
                    if not check_link_target(target, reasons):
                        reasons.append(f"broken link: {raw} (no such file)")
                        missing_targets.add(target)
            if path == index:
                try:
                    write_screenshot(cdp, args.screenshot, run_deadline)
                    shot_written = True
                except (Timeout, OSError) as e:
                    reasons.append(f"could not write the screenshot {args.screenshot}: {e}")
            took = time.monotonic() - t_page
            if reasons:
                failed_pages += 1
                print(f"FAIL {rel} ({took:.1f} s)")
                for r in dict.fromkeys(reasons):  # de-duplicated, in order
                    print(f"     - {r}")
            else:
                n_img = len(info.get("images", []))
                n_links = len(info.get("links", []))
                print(f"OK   {rel} ({took:.1f} s; {n_img} images, {n_links} links)")
            for n in dict.fromkeys(notes):
                print(f"     note: {n}")

        verdict = "PASS" if failed_pages == 0 else "FAIL"
        extra = f"; {external} external links not checked" if external else ""
        if shot_written:
            print(f"check_report: screenshot of the index: {args.screenshot}")
        print(f"{pages} pages, {images} images, {links_checked} links checked{extra}: {verdict} "
              f"({failed_pages} failing pages, {time.monotonic() - t0:.1f} s)")
        return 0 if verdict == "PASS" else 1
    except RunTimeout:
        print(f"check_report: the whole run exceeded --total-timeout {args.total_timeout:g} s: FAIL",
              file=sys.stderr)
        return 2
    except CheckError as e:
        print(f"check_report: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("check_report: interrupted; Chromium stopped", file=sys.stderr)
        return 130
    finally:
        grace = 0.0
        if cdp is not None:
            if cdp.close_browser():
                grace = 5.0
            cdp.close()
        if browser is not None:
            browser.stop(grace)


def write_screenshot(cdp, out, run_deadline):
    deadline = min(run_deadline, time.monotonic() + 60)
    metrics = cdp.send("Page.getLayoutMetrics", deadline=deadline)
    size = metrics.get("cssContentSize") or metrics.get("contentSize") or {}
    height = max(1, min(MAX_SCREENSHOT_HEIGHT, math.ceil(size.get("height", VIEWPORT_HEIGHT))))
    width = max(VIEWPORT_WIDTH, math.ceil(size.get("width", VIEWPORT_WIDTH)))
    shot = cdp.send("Page.captureScreenshot",
                    {"format": "png", "captureBeyondViewport": True,
                     "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}},
                    deadline=deadline)
    parent = os.path.dirname(os.path.abspath(out))
    os.makedirs(parent, exist_ok=True)
    with open(out, "wb") as f:
        f.write(base64.b64decode(shot["data"]))


if __name__ == "__main__":
    sys.exit(main())
