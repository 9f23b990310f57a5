"""A staircase broken in two by a stretch where steps were missed is found as one: two runs
of one period, in phase across the gap (the lab's 64 B padding staircase over the 100 Mbit/s
link came out as [11, 4] steps in two CI runs).  Runs of different periods, or out of phase,
stay apart."""
from versus.transitions import Transition, find_staircases


def steps(positions, grid=8, height=5.1):
    return [Transition(p, p - grid, p, "step", height, None) for p in positions]


def test_missed_steps_do_not_split_a_staircase():
    pos = [1000 + 64 * k for k in list(range(11)) + list(range(14, 19))]   # steps 11-13 missed
    (sc,) = find_staircases(steps(pos))
    assert sc.steps == 16 and abs(sc.period_bytes - 64) <= 1
    assert sc.first_bytes == pos[0] and sc.last_bytes == pos[-1]


def test_out_of_phase_runs_stay_apart():
    pos = [1000 + 64 * k for k in range(6)] + [1000 + 64 * 8 + 30 + 64 * k for k in range(5)]
    assert [s.steps for s in find_staircases(steps(pos))] == [6, 5]


def test_other_period_stays_apart():
    pos = [1000 + 64 * k for k in range(6)] + [1000 + 64 * 7 + 100 * k for k in range(5)]
    found = find_staircases(steps(pos))
    assert len(found) == 2 and abs(found[1].period_bytes - 100) <= 2


def test_too_long_a_gap_stays_apart():
    pos = [1000 + 64 * k for k in range(6)] + [1000 + 64 * 15 + 64 * k for k in range(5)]   # 9 periods
    assert [s.steps for s in find_staircases(steps(pos))] == [6, 5]
