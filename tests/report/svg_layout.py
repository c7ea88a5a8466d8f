#!/usr/bin/env python3
"""Layout check of every plot in an HTML page (or an SVG file), as headless Chromium lays it out.

Usage: svg_layout.py PAGE_OR_SVG SCRATCH_DIR

Copies the page into SCRATCH_DIR with a small script appended that measures, in Chromium's own layout, the box
of every <text> of every top-level <svg> (getBoundingClientRect: after transforms, fonts as rendered) and writes
them into the DOM; `chromium --dump-dom` returns it. Then it checks, per plot:
  - no text outside the plot's viewBox (1 px of slack for anti-aliasing);
  - no two texts overlapping (their boxes intersect by more than 2 px both ways).
Prints one line per problem ("plot <id or index>: ...") and exits 1 when there is any, else prints
"layout ok: N plots, M labels" and exits 0. Exit 2: the page could not be measured.
"""
import html
import json
import os
import re
import subprocess
import sys

MEASURE = r"""
<script>
(function () {
  const out = [];
  const roots = Array.from(document.querySelectorAll('svg')).filter(s => !s.parentElement.closest('svg'));
  roots.forEach((svg, i) => {
    const box = svg.getBoundingClientRect();
    const fig = svg.closest('figure');
    const name = (fig && fig.id) ? fig.id : ('svg ' + i);
    const texts = [];
    svg.querySelectorAll('text').forEach(t => {
      const r = t.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) return;
      texts.push({text: t.textContent, l: r.left, t: r.top, r: r.right, b: r.bottom});
    });
    out.push({name: name, l: box.left, t: box.top, r: box.right, b: box.bottom, texts: texts});
  });
  const pre = document.createElement('pre');
  pre.id = 'layout-result';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    source, scratch = sys.argv[1], sys.argv[2]
    os.makedirs(scratch, exist_ok=True)
    with open(source, encoding="utf-8") as f:
        page = f.read()
    if source.endswith(".svg"):
        page = "<!DOCTYPE html><html><body>" + page + "</body></html>"
    page = page.replace("</body>", MEASURE + "</body>") if "</body>" in page else page + MEASURE
    probe = os.path.join(scratch, "layout_probe.html")
    with open(probe, "w", encoding="utf-8") as f:
        f.write(page)
    cmd = ["timeout", "120", "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--no-first-run", "--window-size=1200,1600", "--user-data-dir=" + os.path.join(scratch, "layout-profile"),
           "--dump-dom", "file://" + os.path.abspath(probe)]
    dom = subprocess.run(cmd, capture_output=True, text=True).stdout
    m = re.search(r'<pre id="layout-result">(.*?)</pre>', dom, re.S)
    if not m:
        print("the page could not be measured (no result in the DOM)")
        return 2
    plots = json.loads(html.unescape(m.group(1)))
    problems = []
    labels = 0
    for p in plots:
        texts = p["texts"]
        labels += len(texts)
        for t in texts:
            if t["l"] < p["l"] - 1 or t["r"] > p["r"] + 1 or t["t"] < p["t"] - 1 or t["b"] > p["b"] + 1:
                problems.append("plot %s: \"%s\" reaches outside the picture (text %.0f..%.0f x %.0f..%.0f, picture "
                                "%.0f..%.0f x %.0f..%.0f)" % (p["name"], t["text"], t["l"], t["r"], t["t"], t["b"],
                                                               p["l"], p["r"], p["t"], p["b"]))
        for i in range(len(texts)):
            for j in range(i + 1, len(texts)):
                a, b = texts[i], texts[j]
                dx = min(a["r"], b["r"]) - max(a["l"], b["l"])
                dy = min(a["b"], b["b"]) - max(a["t"], b["t"])
                if dx > 2 and dy > 2:
                    problems.append("plot %s: \"%s\" and \"%s\" overlap (%.0f x %.0f px)" %
                                    (p["name"], a["text"], b["text"], dx, dy))
    for line in problems:
        print(line)
    if problems:
        return 1
    print("layout ok: %d plots, %d labels" % (len(plots), labels))
    return 0


if __name__ == "__main__":
    sys.exit(main())
