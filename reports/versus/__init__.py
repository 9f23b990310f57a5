"""versus: analysis of point-to-point communication benchmark results.

The analysis API returns plain dataclasses and dicts so that any renderer
(console, HTML, LaTeX) can consume it:

- `load.load_files(paths)` -> runs
- `analysis.analyse_run(run)` / `analysis.summary_document(runs)`
- `samples.SampleSet.of(runs)` -> the runs' sorted reported times per launch and size, made once
  and passed to `compare.compare_runs(a_runs, b_runs, samples=...)`, `launches.launch_spread`
  and `speedclass.speed_classes`
- `studies.*` -> the seed-study tables as data
"""
__version__ = "0.1.0"
