"""Whether a launch ran on a loaded host, as versus-run recorded it and `versus summary` says it
(hostload.py's rule).  Apart from vstest, which imports nothing of the analysis package."""
from versus.hostload import run_load
from versus.load import load_file


def launch_load(out):
    """The summary's words for a launch that ran on a loaded host, or None when the host was
    quiet or the record says nothing of it."""
    runs = load_file(out)
    d = run_load(runs[0]) if runs else None
    return d["words"] if d and d.get("loaded") else None
