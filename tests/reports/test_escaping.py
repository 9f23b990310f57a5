"""Labels from configs and the environment reach HTML and LaTeX as text: a
transport option `a_b&c<script>…%#\\` is escaped in both, the PDF shows it
verbatim, and the page holds no script element."""
import json
import os
import re

from rtest import EXAMPLE, check, pdflatex, pdftotext, tmpdir, versus

HOSTILE = "a_b&c<script>alert(1)</script>%50#1\\x"
out = tmpdir()
src = os.path.join(EXAMPLE, "shm.jsonl")
dst = os.path.join(out, "hostile.jsonl")
with open(src, encoding="utf-8") as f, open(dst, "w", encoding="utf-8") as g:
    for line in f:
        rec = json.loads(line)
        if rec["record"] == "run":
            rec["transport"]["options"] = {"label": HOSTILE}
            rec["env"] = {"UCX_TLS": HOSTILE}
        g.write(json.dumps(rec) + "\n")
rep = os.path.join(out, "report")
versus(["report", dst, "-o", rep, "--title", "Title with <b>bold</b> & 100% #1 \\ _x_"])

html = open(os.path.join(rep, "index.html"), encoding="utf-8").read()
check("<script>" not in html, "no <script> element reaches the HTML")
check("a_b&amp;c&lt;script&gt;alert(1)&lt;/script&gt;%50#1\\x" in html,
      "the option value is HTML-escaped text in the tables")
check("Title with &lt;b&gt;bold&lt;/b&gt; &amp; 100% #1 \\ _x_" in html, "the title is escaped")
specs = re.findall(r'<script type="application/json" id="chart-[\w-]+-spec">(.*?)</script>', html, re.S)
check(specs and all("<" not in s and ">" not in s and "&" not in s for s in specs),
      "the figures' JSON holds no <, > or & (a label cannot end its script element)")
names = [t["name"] for s in specs for t in json.loads(s)["data"] if t.get("showlegend", True) is not False]
check("a_b&amp;c&lt;script&gt;alert(1)&lt;/script&gt;%50#1\\x" in " ".join(names),
      "the figures' legend names carry the label as text (escaped for Plotly, which reads a few tags)")
details = open(os.path.join(rep, "details.html"), encoding="utf-8").read()
check("<script>" not in details and "a_b&amp;c&lt;script&gt;alert(1)&lt;/script&gt;%50#1\\x" in details,
      "details.html escapes the label too")

tex = open(os.path.join(rep, "report.tex"), encoding="utf-8").read()
want = r"a\_b\&c\textless{}script\textgreater{}alert(1)\textless{}/\allowbreak{}script\textgreater{}\%50\#1\textbackslash{}x"
check(want in tex, "the option value is LaTeX-escaped in report.tex")
check(r"Title with \textless{}b\textgreater{}bold\textless{}/\allowbreak{}b\textgreater{} \& 100\% \#1 \textbackslash{} \_x\_" in tex,
      "the title is LaTeX-escaped")
text = pdftotext(pdflatex(rep))
check("&c<script>alert(1)</script>%50#1\\x" in text.replace("\n", ""), "the PDF shows the label verbatim")
import pyarrow.parquet as pq  # noqa: E402

options = set(pq.read_table(os.path.join(rep, "samples.parquet"), columns=["options"]).column("options").to_pylist())
check(options == {"label=" + HOSTILE}, "samples.parquet keeps the label as data")
