"""What a sample of each one-sided pattern means (versus.units): put and get latency
and the atomics are one operation (divisor 1), their bandwidth variant a window of W
operations (divisor W, told apart by the recorded window), putnotify a round trip
(divisor 2, as pingpong)."""
import pytest

from versus.units import sample_meaning


@pytest.mark.parametrize("pattern", ["put", "get"])
def test_latency_is_one_operation(pattern):
    m = sample_meaning(pattern, {})
    assert (m.divisor, m.bytes_factor) == (1.0, 1.0)
    assert pattern in m.time_label and "latency" in m.short_label


@pytest.mark.parametrize("pattern", ["put", "get"])
def test_bandwidth_is_a_window(pattern):
    m = sample_meaning(pattern, {"window": 16})
    assert (m.divisor, m.bytes_factor) == (16.0, 1.0)
    assert "16" in m.sample_label


def test_atomic_and_putnotify():
    assert sample_meaning("atomic", {}).divisor == 1.0
    pn, pp = sample_meaning("putnotify", {}), sample_meaning("pingpong", {})
    assert (pn.divisor, pn.bytes_factor) == (pp.divisor, pp.bytes_factor)
    assert pn.short_label == pp.short_label == "one-way latency"
