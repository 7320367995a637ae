#!/usr/bin/env python3
"""The HTML stage timeline of EXPLAIN (ANALYZE, FORMAT HTML) (planner/timeline.h).

  timeline_test.py html SLUICE      the document's structure: well-formed, one lane
                                    per stage that ran (the stages FORMAT JSON lists),
                                    each task bar inside its lane, nothing fetched from
                                    a network, spills, cache reads and decisions shown
  timeline_test.py chromium SLUICE  renders it in headless Chromium (Debian's
                                    `chromium`, scripts/deps.sh) and checks that the
                                    screenshot shows each lane's colours in the lane's
                                    rows and its task bars inside them

Fails (never skips) when chromium is missing.  Standard library only: the PNG is
decoded here with zlib.
"""
import html.parser
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

MODE, SLUICE = sys.argv[1], sys.argv[2]
TMP = tempfile.mkdtemp(prefix="sluice_timeline.")
failures = []

SETUP = (f"SET temp_directory = '{TMP}'; SET shuffle_partitions = 4; "
         "CREATE TABLE t AS SELECT range AS id, range * 7919 % 100003 AS v, "
         "'str' || (range * 37 % 11) || 'abcdefghijklmnop' AS s FROM range(100000); "
         "CACHE TABLE c AS SELECT v % 10 AS k, count(*) AS n FROM t GROUP BY 1; ")
QUERY = ("SELECT t.s, count(*), max(c.n) FROM t JOIN c ON t.v % 10 = c.k "
         "GROUP BY t.s ORDER BY 1")
SPILL = "SET memory_limit = '2MB'; "
SPILL_QUERY = "SELECT id, v, s FROM t ORDER BY s DESC, v LIMIT 5"


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def sluice(sql):
    r = subprocess.run([SLUICE, "--threads", "2", "-c", sql], capture_output=True, text=True,
                       timeout=120)
    return r.returncode, r.stdout, r.stderr


def explain(fmt, query, prefix=""):
    rc, out, err = sluice(SETUP + prefix + f"EXPLAIN (ANALYZE, FORMAT {fmt}) {query}")
    check(rc == 0, f"EXPLAIN (ANALYZE, FORMAT {fmt}) runs: {err}")
    return out


class Doc(html.parser.HTMLParser):
    """Checks that every element closes in order and collects the SVG rects."""
    VOID = {"meta", "br", "hr", "img", "input", "link"}

    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.rects = [], [], []

    def handle_starttag(self, tag, attrs):
        if tag == "rect":
            self.rects.append(dict(attrs))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        if tag == "rect":
            self.rects.append(dict(attrs))

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
        else:
            self.stack.pop()


def parse(doc):
    p = Doc()
    p.feed(doc)
    p.close()
    check(not p.errors and not p.stack, f"well-formed: {p.errors[:3]} open {p.stack}")
    lanes = [r for r in p.rects if r.get("class") == "lane"]
    tasks = [r for r in p.rects if r.get("class") == "task"]
    return lanes, tasks, p.rects


def box(r):
    return int(r["x"]), int(r["y"]), int(r["width"]), int(r["height"])


def lane_of(task, lanes):
    _, ty, _, th = box(task)
    for i, lane in enumerate(lanes):
        _, y, _, h = box(lane)
        if y <= ty and ty + th <= y + h:
            return i
    return None


# ---- the document -------------------------------------------------------------------

def test_html():
    doc = explain("HTML", QUERY)
    plan = json.loads(explain("JSON", QUERY))
    ran = [s for s in plan["stages"] if not s.get("skipped")]
    lanes, tasks, _ = parse(doc)
    check(doc.startswith("<!DOCTYPE html>") and doc.rstrip().endswith("</html>"), "a whole page")
    check([int(l["data-stage"]) for l in lanes] == [s["id"] for s in ran],
          f"one lane per stage that ran: {[l['data-stage'] for l in lanes]} vs JSON {ran}")
    check(len(ran) >= 3, f"the query has several stages: {len(ran)}")
    for bad in ("http://", "https://", "<script", "<link", "src=", "url(", "@import"):
        check(bad not in doc.lower(), f"self-contained: no {bad!r}")
    by_lane = [[] for _ in lanes]
    for t in tasks:
        i = lane_of(t, lanes)
        check(i is not None, f"task bar inside a lane: {t}")
        if i is not None:
            by_lane[i].append(t)
    for i, s in enumerate(ran):
        check(len(by_lane[i]) == s["tasks"],
              f"stage {s['id']}: {len(by_lane[i])} bars for {s['tasks']} tasks")
        check(len({t["fill"] for t in by_lane[i]}) <= 1, f"stage {s['id']}: one bar colour")
        x, _, w, _ = box(lanes[i])
        check(all(x <= box(t)[0] and box(t)[0] + box(t)[2] <= x + w for t in by_lane[i]),
              f"stage {s['id']}: bars within the time axis")
    fills = [l["fill"] for l in lanes]
    check(all(a != b for a, b in zip(fills, fills[1:])), f"neighbouring lanes differ: {fills}")
    shuffled = [s for s in ran if "shuffle" in s]
    for s in shuffled:
        check(f"{s['shuffle']['rows']} rows</text>" in doc,
              f"stage {s['id']}'s shuffle rows in its lane: {s['shuffle']}")
    check("[cache read]" in doc and "read c (" in doc, "the cache read is shown")
    m = re.search(r"Adaptive decisions \((\d+)\)", doc)
    check(m is not None and int(m.group(1)) == len(plan["adaptive"]),
          f"every adaptive decision: {m and m.group(0)} vs {len(plan['adaptive'])}")
    lane_ids = {s["id"] for s in ran}
    for d in plan["adaptive"]:
        rule = d["rule"]
        check(f"&quot;rule&quot;: &quot;{rule}&quot;" in doc, f"decision {rule} with its numbers")
        if d.get("stage") in lane_ids:
            label = re.search(rf'<text class="lh"[^>]*>Stage {d["stage"]}\b.*?</text>', doc)
            check(label and f"\u25c6 {rule}" in label.group(0),
                  f"decision {rule} marked on stage {d['stage']}'s lane")
    check("Stage 1 -&gt;" in doc and "Total: " in doc, "the plan as run, with its total")

    spill_doc = explain("HTML", SPILL_QUERY, SPILL)
    spill_json = json.loads(explain("JSON", SPILL_QUERY, SPILL))
    _, _, rects = parse(spill_doc)
    check(spill_json["spilled_bytes"] > 0, "the spill query spills")
    check(any(r.get("class") == "spill" for r in rects), "a spill is marked on its lane")

    rc, _, err = sluice("EXPLAIN (FORMAT HTML) SELECT 1")
    check(rc == 1 and "needs ANALYZE" in err, f"FORMAT HTML without ANALYZE: {err}")
    rc, _, err = sluice("EXPLAIN (ANALYZE, FORMAT xml) SELECT 1")
    check(rc == 1 and "text, json or html" in err, f"an unknown format: {err}")


# ---- the screenshot -----------------------------------------------------------------

def png_pixels(path):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB or RGBA PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    at, idat = 8, b""
    while at < len(data):
        n, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + n]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0, "unexpected PNG format"
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        at += 12 + n
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev, rows = bytearray(stride), []
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def rgb(hex_colour):
    v = int(hex_colour.lstrip("#"), 16)
    return (v >> 16, (v >> 8) & 255, v & 255)


def near(p, q):
    return all(abs(a - b) <= 3 for a, b in zip(p, q))


def screenshot(html_path, png_path, width, height):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        check(False, "chromium is not installed: run scripts/deps.sh (Debian package chromium)")
        return False
    r = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", "--force-device-scale-factor=1",
                        f"--window-size={width},{height}", f"--screenshot={png_path}",
                        "file://" + html_path], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, HOME=TMP))
    check(r.returncode == 0 and os.path.exists(png_path), f"chromium screenshot: {r.stderr[-500:]}")
    return os.path.exists(png_path)


def test_chromium():
    doc = explain("HTML", QUERY)
    lanes, tasks, _ = parse(doc)
    html_path, png_path = os.path.join(TMP, "t.html"), os.path.join(TMP, "t.png")
    open(html_path, "w").write(doc)
    if not screenshot(html_path, png_path, 1100, 900):
        return
    width, height, px = png_pixels(png_path)
    # Where the SVG landed: the first row and column of the first lane's colour.
    x0, y0, w0, _ = box(lanes[0])
    tint0 = rgb(lanes[0]["fill"])
    hits = [(y, x) for y in range(height) for x in range(0, width, 2) if near(px[y][x], tint0)]
    check(hits, "the first lane's colour is on the screen")
    if not hits:
        return
    top = hits[0][0]
    left = min(x for y, x in hits if y == top)
    while left > 0 and near(px[top][left - 1], tint0):  # columns were sampled every 2 pixels
        left -= 1
    dy, dx = top - y0, left - x0
    for lane in lanes:
        x, y, w, h = box(lane)
        mine = [t for t in tasks if lane_of(t, [lane]) == 0]
        check(mine, f"stage {lane['data-stage']} has task bars")
        tint, bar = rgb(lane["fill"]), rgb(mine[0]["fill"]) if mine else (-9, -9, -9)

        def cover(r):
            """The share of row r of the lane (r < 0, r >= h: around it) in its colours."""
            if not 0 <= y + dy + r < height:
                return 0
            row = px[y + dy + r]
            cols = range(x + dx, x + dx + w, 3)
            return sum(near(row[c], tint) or near(row[c], bar) for c in cols) / len(cols)

        inside = min(cover(r) for r in range(h))
        outside = max(cover(r) for r in (-3, -2, h + 1, h + 2))
        check(inside > 0.9, f"stage {lane['data-stage']}: its colours fill its rows ({inside:.2f})")
        check(outside < 0.05, f"stage {lane['data-stage']}: its colours stop at its edges "
              f"({outside:.2f})")
        seen = sum(near(px[y + dy + r][x + dx + c], bar) for r in range(h) for c in range(w))
        drawn = sum(box(t)[2] * box(t)[3] for t in mine)
        check(seen >= 0.5 * drawn and seen > 0,
              f"stage {lane['data-stage']}: its task bars show ({seen} of {drawn} pixels)")


os.environ.setdefault("HOME", TMP)
{"html": test_html, "chromium": test_chromium}[MODE]()
shutil.rmtree(TMP, ignore_errors=True)
print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)
