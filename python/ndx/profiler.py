"""ndx.profiler: MXNet's mx.profiler over ndx's recording spans.

    ndx.profiler.set_config(filename="trace.json", aggregate_stats=True)
    ndx.profiler.set_state("run")
    ...                                   # ops, hybridized blocks, backward, data loading
    ndx.profiler.set_state("stop")
    ndx.profiler.dump()                   # Chrome trace-event JSON: open in Perfetto
    print(ndx.profiler.dumps())           # the aggregate table by op

Spans: every op kernel ("operator", with the bytes of its outputs), each run of a hybridized
graph ("executor"), each backward pass ("autograd"), each DataLoader batch ("data"), each
kvstore push / pull ("kvstore"), and `ndx.profiler.scope(name)` blocks ("python"). Off, a
span costs one atomic load in the core. GPU kernels run asynchronously: their spans time the
launch.
"""
import contextlib
import json
import os
import threading

from . import _core

__all__ = ["set_config", "set_state", "state", "pause", "resume", "dump", "dumps", "scope",
           "Event"]

_lock = threading.Lock()
_config = {"filename": "profile.json", "aggregate_stats": False, "profile_all": False}
_state = "stop"
_paused = False
_events = []  # the events read from the core so far (dump and dumps read and keep them)
_CONFIG_KEYS = {"filename", "aggregate_stats", "profile_all", "profile_symbolic",
                "profile_imperative", "profile_memory", "profile_api", "continuous_dump",
                "dump_period", "gpu_memory_profile_filename_prefix", "profile_process"}


def set_config(**kwargs):
    """MXNet's profiler.set_config: filename (the trace dump's path), aggregate_stats (keep
    statistics for dumps()), profile_all and the other profile_* switches. ndx records every
    kind of span whenever it runs, so the switches are accepted and recorded only."""
    unknown = sorted(set(kwargs) - _CONFIG_KEYS)
    if unknown:
        raise TypeError(f"[profiler.set_config] unknown argument(s) {unknown}; known: "
                        f"{sorted(_CONFIG_KEYS)}")
    if "filename" in kwargs and not isinstance(kwargs["filename"], (str, os.PathLike)):
        raise TypeError("[profiler.set_config] filename must be a path, got "
                        f"{type(kwargs['filename']).__name__}")
    with _lock:
        _config.update(kwargs)


def _apply():
    _core._profiler_set(_state == "run" and not _paused)


def set_state(state="stop", profile_process="worker"):
    """'run' starts recording, 'stop' stops it (the events stay until dump or dumps(reset))."""
    global _state
    if state not in ("run", "stop"):
        raise ValueError(f"[profiler.set_state] state must be 'run' or 'stop', got {state!r}")
    with _lock:
        _state = state
        _apply()


def state():
    """'run' or 'stop'."""
    return _state


def pause(profile_process="worker"):
    """Stops recording until resume(), keeping the state 'run'."""
    global _paused
    with _lock:
        _paused = True
        _apply()


def resume(profile_process="worker"):
    global _paused
    with _lock:
        _paused = False
        _apply()


def _collect():
    with _lock:
        _events.extend(_core._profiler_events(True))
        return list(_events)


def record(name, category, start_ns, end_ns):
    """Adds a span timed with now_ns() (for spans measured in Python)."""
    _core._profiler_record(name, category, start_ns, end_ns)


now_ns = _core._profiler_now


def is_recording():
    return _state == "run" and not _paused


@contextlib.contextmanager
def scope(name="<unk>:", category="python"):
    """Records the block as one span (MXNet's profiler.scope names a scope the same way)."""
    if not is_recording():
        yield
        return
    start = now_ns()
    try:
        yield
    finally:
        record(str(name), category, start, now_ns())


class Event:
    """MXNet's profiler.Event: a named span between start() and stop()."""

    def __init__(self, name):
        self.name = str(name)
        self._start = None

    def start(self):
        self._start = now_ns()

    def stop(self):
        if self._start is None:
            raise RuntimeError(f"[profiler.Event] {self.name!r}: stop() without start()")
        if is_recording():
            record(self.name, "python", self._start, now_ns())
        self._start = None


def trace(events=None):
    """The events as a Chrome trace-event document (a dict): complete ("X") events with
    microsecond timestamps, one track per thread."""
    events = _collect() if events is None else events
    pid = os.getpid()
    origin = min((e[2] for e in events), default=0)
    threads = {}
    out = [{"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
            "args": {"name": "ndx"}}]
    for name, cat, start, end, nbytes, thread in events:
        tid = threads.setdefault(thread, len(threads) + 1)
        event = {"name": name, "cat": cat, "ph": "X", "ts": (start - origin) / 1000.0,
                 "dur": max(end - start, 0) / 1000.0, "pid": pid, "tid": tid}
        if nbytes:
            event["args"] = {"output_bytes": nbytes}
        out.append(event)
    for thread, tid in threads.items():
        out.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                    "args": {"name": f"thread {tid}"}})
    return {"traceEvents": out, "displayTimeUnit": "ms"}


def dump(finished=True, profile_process="worker"):
    """Writes the trace of the events so far to set_config's filename (Chrome trace-event
    JSON, which Perfetto and chrome://tracing open). finished=True also stops recording and
    forgets the events, as MXNet's dump ends a profile."""
    global _state
    document = trace()
    filename = os.fspath(_config["filename"])
    with open(filename, "w") as f:
        json.dump(document, f)
    if finished:
        with _lock:
            _events.clear()
            _state = "stop"
            _apply()
    return filename


def aggregate(events=None):
    """{(category, name): [count, total_ns, min_ns, max_ns, bytes]} of the events."""
    events = _collect() if events is None else events
    stats = {}
    for name, cat, start, end, nbytes, _thread in events:
        d = max(end - start, 0)
        row = stats.get((cat, name))
        if row is None:
            stats[(cat, name)] = [1, d, d, d, nbytes]
        else:
            row[0] += 1
            row[1] += d
            row[2] = min(row[2], d)
            row[3] = max(row[3], d)
            row[4] += nbytes
    return stats


_SORT_KEYS = {"total": 1, "avg": None, "min": 2, "max": 3, "count": 0}


def dumps(reset=False, format="table", sort_by="total", ascending=False):  # noqa: A002
    """The aggregate statistics of the events so far: per op (and per executor, autograd and
    data span) the calls, total / mean / min / max time in ms and the bytes of the outputs
    written. format='table' (MXNet's layout) or 'json'; reset=True forgets the events."""
    if format not in ("table", "json"):
        raise ValueError(f"[profiler.dumps] format must be 'table' or 'json', got {format!r}")
    if sort_by not in _SORT_KEYS:
        raise ValueError(f"[profiler.dumps] sort_by must be one of {sorted(_SORT_KEYS)}, got "
                         f"{sort_by!r}")
    stats = aggregate()
    if reset:
        with _lock:
            _events.clear()

    def key(item):
        row = item[1]
        return row[1] / row[0] if sort_by == "avg" else row[_SORT_KEYS[sort_by]]

    rows = sorted(stats.items(), key=key, reverse=not ascending)
    if format == "json":
        out = {}
        for (cat, name), (count, total, lo, hi, nbytes) in rows:
            out.setdefault(cat, {})[name] = {
                "count": count, "total_ms": total / 1e6, "avg_ms": total / count / 1e6,
                "min_ms": lo / 1e6, "max_ms": hi / 1e6, "output_bytes": nbytes}
        return json.dumps(out)
    lines = ["Profile Statistics:", "\tNote that times are in milliseconds."]
    for cat in sorted({c for (c, _n) in stats}):
        lines += ["", cat, "=" * len(cat),
                  f"{'Name':<40}{'Total Count':>12}{'Time (ms)':>14}{'Min Time (ms)':>15}"
                  f"{'Max Time (ms)':>15}{'Avg Time (ms)':>15}{'Output bytes':>15}",
                  f"{'----':<40}{'-----------':>12}{'---------':>14}{'-------------':>15}"
                  f"{'-------------':>15}{'-------------':>15}{'------------':>15}"]
        for (c, name), (count, total, lo, hi, nbytes) in rows:
            if c == cat:
                lines.append(f"{name[:39]:<40}{count:>12}{total / 1e6:>14.4f}"
                             f"{lo / 1e6:>15.4f}{hi / 1e6:>15.4f}{total / count / 1e6:>15.4f}"
                             f"{nbytes:>15}")
    return "\n".join(lines) + "\n"
