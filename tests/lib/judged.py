"""Launch until judged: the loop the ground-truth tests share.

A truth test compares what is imposed from outside (a tbf rate, a relay delay, a threshold set in
the environment) with what versus measured.  One launch is not the unit of such a claim: launches
of one configuration differ (tbf at 1 Gbit/s fitted 905, 956 and 1048 Mbit/s in three launches of
one quiet run), and a launch the host loaded says nothing of the link.  So a test launches until
the launches so far decide, within a time budget it states:

- `until_judged(what, launch, judge, budget, first)` launches (`launch(k)` returns the launch's
  figure and, when versus-run recorded the host as loaded, the words that say so), and from
  `first` quiet launches on asks `judge(figures of the quiet launches)` for a Verdict after each
  one; it stops at the first pass or fail.  When the budget cannot hold one more launch (the
  longest so far), or the judgement says it needs more launches at the spread so far than the
  budget can still hold (band's and below's estimate, from 2 x `first` quiet launches), it stops undecided: the outcome is a skip,
  which prints every launch's figure, the load each saw and what the judgement still needed.
- `band(...)` is the judgement of a figure against a truth with a tolerance, the launch as the
  unit: it passes when a 95 % interval over the launches lies inside truth x (1 +- tolerance) and
  fails when one lies wholly outside; in between it needs more launches.  Two intervals: the
  geometric mean's (Student's t on the logarithms, as `versus compare` infers between launches)
  and, from six launches on, the median's distribution-free one (order statistics), which one
  launch whose fit went astray cannot widen.  An interval never becomes narrower by being given
  a wider tolerance, and a truth missed by more than the tolerance leaves every interval outside
  the band once there are enough launches: the test fails then.
- `below(...)` is the same for a figure that must stay under a bound (an overhead that must not
  grow with a delay).
- `settle(outcomes)` ends the test: a fail fails it, else a skip exits 77 with the figures.

Apart from vstest, which it uses for the output only; nothing of the analysis package."""
import math
import statistics
import sys
import time

import vstest as vt

LEVEL = 0.95
MEDIAN_FROM = 6          # the fewest launches whose median has a 95 % distribution-free interval
# Student's t, 97.5th percentile, 1 to 30 degrees of freedom
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
         2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
         2.052, 2.048, 2.045, 2.042)


def t975(df):
    return _T975[df - 1] if df <= len(_T975) else 1.96 + 2.4 / df   # within 0.001 past 30


class Budget:
    """A time budget in seconds from now; part(n) is an even share of what is left among n parts."""

    def __init__(self, seconds):
        self.seconds, self.start = float(seconds), time.monotonic()

    def spent(self):
        return time.monotonic() - self.start

    def left(self):
        return self.seconds - self.spent()

    def part(self, parts):
        return Budget(max(self.left(), 0.0) / max(parts, 1))


class Verdict:
    """state: pass, fail or undecided (skip once the budget ended it); words: the figures the
    judgement rests on; needs: for undecided, what would decide it; launches: for undecided, about
    how many launches in all would decide it at the spread so far (None: not known)."""

    def __init__(self, state, words, needs="", launches=None):
        self.state, self.words, self.needs, self.launches = state, words, needs, launches


class Launch:
    def __init__(self, k, value, load, seconds):
        self.k, self.value, self.load, self.seconds = k, value, load, seconds


class Outcome:
    def __init__(self, what, verdict, launches, budget, show):
        self.what, self.verdict, self.launches, self.budget, self.show = what, verdict, launches, budget, show

    @property
    def state(self):
        return self.verdict.state

    def counts(self):
        loaded = sum(r.load is not None for r in self.launches)
        return (f"{len(self.launches)} launches ({loaded} loaded), {sum(r.seconds for r in self.launches):.0f} s "
                f"of a budget of {self.budget.seconds:.0f} s")

    def figures(self):
        """Every launch: its figure, and the load when versus-run recorded one."""
        return "; ".join(f"launch {r.k}: {self.show(r.value)}" + (f" (loaded, not judged: {r.load})" if r.load else "")
                         for r in self.launches)

    def text(self):
        if self.state == "skip":
            return (f"{self.what} not judged within its budget ({self.counts()}): {self.verdict.words}; "
                    f"it would have needed {self.verdict.needs}; every launch: {self.figures()}")
        return f"{self.what}: {self.state} after {self.counts()}: {self.verdict.words}"


def until_judged(what, launch, judge, budget, first=3, show=lambda v: f"{v:.2f}"):
    """Launch (launch(k) -> (figure, load words or None)) until judge(figures of the quiet launches)
    says pass or fail, asking it from `first` quiet launches on; stop undecided (a skip) when the
    budget cannot hold another launch as long as the longest so far.  Returns an Outcome."""
    runs = []
    verdict = Verdict("undecided", "no launch yet", f"{first} quiet launches")
    while True:
        quiet = [r.value for r in runs if r.load is None]
        longest = max((r.seconds for r in runs), default=0.0)
        if len(quiet) >= first:
            verdict = judge(quiet)
            if verdict.state in ("pass", "fail"):
                break
            # futile: at this spread the judgement needs more launches than the budget can still hold
            # (from twice the first count on: the spread of three launches is itself too unsure)
            room = int(budget.left() // longest) if longest > 0 else None
            if (verdict.launches and room is not None and len(quiet) >= 2 * first
                    and verdict.launches - len(quiet) > room):
                verdict = Verdict("skip", verdict.words, f"{verdict.needs} (the budget holds about {room} more)")
                break
        elif runs:
            verdict = Verdict("undecided", f"{len(quiet)} quiet launches of the {first} the judgement starts from",
                              f"{first - len(quiet)} more launches the host leaves alone")
        if budget.left() <= longest:
            verdict = Verdict("skip", verdict.words, verdict.needs)
            break
        t0 = time.monotonic()
        value, load = launch(len(runs))
        runs.append(Launch(len(runs), value, load, time.monotonic() - t0))
        vt.log(f"{what} launch {runs[-1].k}: {show(value)}" + (f" (loaded, not judged: {load})" if load else "")
               + f" [{runs[-1].seconds:.1f} s, {budget.spent():.0f} of {budget.seconds:.0f} s spent]")
    out = Outcome(what, verdict, runs, budget, show)
    vt.log(out.text())
    return out


def median_interval(xs, level=LEVEL):
    """The distribution-free interval of the median of xs (order statistics), or None below
    MEDIAN_FROM values."""
    n, xs = len(xs), sorted(xs)
    cum, k = 0.0, 0
    for j in range(n):
        cum += math.comb(n, j) / 2 ** n
        if cum > (1 - level) / 2:
            break
        k = j + 1
    return (xs[k - 1], xs[n - k]) if k else None


def mean_interval(ys, level=LEVEL):
    """Student's t interval of the mean of ys (two or more)."""
    m = statistics.fmean(ys)
    hw = t975(len(ys) - 1) * statistics.stdev(ys) / math.sqrt(len(ys))
    return m, (m - hw, m + hw)


def _launches_for(sd, room):
    """About how many launches a t interval of half width `room` needs at this spread."""
    if room <= 0:
        return None
    n = 2
    while t975(n - 1) * sd / math.sqrt(n) > room:
        n += 1
        if n > 1000:
            return None
    return n


def band(values, truth, tolerance, unit="", log=True):
    """Verdict on launch figures against truth x (1 +- tolerance).  log: on the logarithms (the
    geometric mean: rates, whose launches scale); else on the figures themselves (a delay, which a
    launch can overshoot by an additive wake-up)."""
    if len(values) < 2:
        return Verdict("undecided", f"{len(values)} launch", "two launches at least")
    f = (lambda v: math.log(v / truth)) if log else (lambda v: v / truth - 1)
    back = (lambda y: truth * math.exp(y)) if log else (lambda y: truth * (1 + y))
    lo, hi = f(truth * (1 - tolerance)), f(truth * (1 + tolerance))
    ys = [f(v) for v in values]
    m, (a, b) = mean_interval(ys)
    rel = lambda y: f"{100 * (back(y) / truth - 1):+.1f} %"   # noqa: E731
    name = "geometric mean" if log else "mean"
    words = (f"{name} of {len(ys)} launches {back(m):.2f}{unit} ({rel(m)} of {truth:.2f}{unit}), 95 % interval "
             f"{back(a):.2f} to {back(b):.2f}{unit} ({rel(a)} to {rel(b)}) against +-{100 * tolerance:.0f} %")
    states = [("pass" if lo <= a and b <= hi else "fail" if b < lo or a > hi else None)]
    med = median_interval(ys)
    if med:
        words += (f"; median {back(statistics.median(ys)):.2f}{unit}, 95 % interval {back(med[0]):.2f} to "
                  f"{back(med[1]):.2f}{unit} ({rel(med[0])} to {rel(med[1])})")
        states.append("pass" if lo <= med[0] and med[1] <= hi else "fail" if med[1] < lo or med[0] > hi else None)
    decided = {s for s in states if s}
    if len(decided) == 1:
        return Verdict(decided.pop(), words)
    room = min(m - lo, hi - m) if lo <= m <= hi else max(lo - m, m - hi)
    n = _launches_for(statistics.stdev(ys), room)
    return Verdict("undecided", words, "a 95 % interval wholly inside or wholly outside the tolerance"
                   + (f": about {n} launches at this spread" if n else ": over a thousand launches at this spread"),
                   n or 1001)


def below(values, bound, unit="", what="the figure"):
    """Verdict on launch figures that must not exceed bound: pass when the 95 % interval of their
    mean (or, from six launches, of their median) lies below it, fail when one lies above it."""
    if len(values) < 2:
        return Verdict("undecided", f"{what}: {len(values)} launch", "two launches at least")
    m, (a, b) = mean_interval(values)
    words = f"{what}: mean {m:+.2f}{unit}, 95 % interval {a:+.2f} to {b:+.2f}{unit} against at most {bound:.2f}{unit}"
    states = ["pass" if b <= bound else "fail" if a > bound else None]
    med = median_interval(values)
    if med:
        words += f"; median {statistics.median(values):+.2f}{unit}, 95 % interval {med[0]:+.2f} to {med[1]:+.2f}{unit}"
        states.append("pass" if med[1] <= bound else "fail" if med[0] > bound else None)
    decided = {s for s in states if s}
    if len(decided) == 1:
        return Verdict(decided.pop(), words)
    n = _launches_for(statistics.stdev(values), abs(bound - m))
    return Verdict("undecided", words, f"a 95 % interval wholly below or above {bound:.2f}{unit}"
                   + (f": about {n} launches at this spread" if n else ": over a thousand launches at this spread"),
                   n or 1001)


def combine(verdicts):
    """One verdict of several that must all pass: a fail fails it, all passing pass it."""
    words = "; ".join(v.words for v in verdicts)
    if any(v.state == "fail" for v in verdicts):
        return Verdict("fail", words)
    if all(v.state == "pass" for v in verdicts):
        return Verdict("pass", words)
    more = [v.launches for v in verdicts if v.state == "undecided"]
    return Verdict("undecided", words, "; ".join(v.needs for v in verdicts if v.state == "undecided"),
                   max(more) if more and all(more) else None)


def settle(outcomes, check=True):
    """End of the judging: every outcome passed (logged), or the first that failed fails the test,
    or, with none failed, the skips exit 77 with their figures."""
    for o in outcomes:
        if o.state == "fail" and check:
            vt.fail(o.text())
    skips = [o for o in outcomes if o.state == "skip"]
    if skips:
        print("SKIP: " + " | ".join(o.text() for o in skips), flush=True)
        sys.exit(vt.SKIP)
    for o in outcomes:
        vt.log("ok: " + o.text())
