"""MXNet's Monitor (``mx.monitor`` / ``mx.mon``): statistics of a network's internal outputs,
weights and auxiliary states every `interval` batches, for debugging training.

    mon = mx.mon.Monitor(100, pattern='.*weight|.*output')
    mod.fit(train_iter, ..., monitor=mon)     # logs 'Batch:     101 fc1_output  0.0134'

tic() before a batch's forward starts collecting on every interval-th batch; the installed
executors then report each op output of that forward ('fc1_output'); toc() adds the
arguments and auxiliary states whose names match (their values at toc time, after the
update, as in MXNet) and returns [(step, name, text)]. The statistic is stat_func(array),
norm(x) / sqrt(x.size) by default."""
import logging
import math
import re

from . import numpy as np

__all__ = ["Monitor"]


def _rms(x):
    return np.sqrt(np.sum(np.square(x.astype("float64")))) / math.sqrt(max(x.size, 1))


class _Collector:
    """The executors' monitor callback: records stat_func of matching names while the
    monitor is active."""

    def __init__(self, monitor):
        self._monitor = monitor

    @property
    def active(self):
        return self._monitor.activated

    def __call__(self, name, array):
        mon = self._monitor
        if mon.activated and mon.re_prog.match(name):
            mon.queue.append((mon.step, name, mon.stat_func(array)))


class Monitor:
    """Collects stat_func of the outputs (and, at toc, the arguments and auxiliary states)
    whose names match `pattern`, every `interval` batches; sort orders them by name;
    monitor_all also reports the ops' inputs at forward time."""

    def __init__(self, interval, stat_func=None, pattern=".*", sort=False, monitor_all=False):
        if isinstance(interval, bool) or not isinstance(interval, int) or interval < 1:
            raise ValueError(f"[Monitor] interval must be an int >= 1, got {interval!r}")
        self.interval = interval
        self.stat_func = _rms if stat_func is None else stat_func
        if not callable(self.stat_func):
            raise TypeError(f"[Monitor] stat_func must be callable, got "
                            f"{type(stat_func).__name__}")
        self.re_prog = re.compile(pattern)
        self.sort = sort
        self.monitor_all = monitor_all
        self.activated = False
        self.queue = []
        self.step = 0
        self.exes = []
        self._collector = _Collector(self)

    def install(self, exe):
        """Reports exe's internal outputs (an Executor, or anything with
        set_monitor_callback)."""
        exe.set_monitor_callback(self._collector, self.monitor_all)
        self.exes.append(exe)

    def tic(self):
        """Starts collecting if this batch is an interval-th one."""
        if self.step % self.interval == 0:
            self.queue = []
            self.activated = True
        self.step += 1

    def toc(self):
        """Ends collecting: [(step, name, statistic as text)], with the matching arguments
        and auxiliary states of every installed executor added."""
        if not self.activated:
            return []
        for exe in self.exes:
            for name, array in list(exe.arg_dict.items()) + list(exe.aux_dict.items()):
                if array is not None and self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
        self.activated = False
        if self.sort:
            self.queue.sort(key=lambda item: item[1])
        res = []
        for step, name, values in self.queue:
            values = values if isinstance(values, (list, tuple)) else [values]
            text = ""
            for v in values:
                v = np.asarray(v) if not isinstance(v, np.ndarray) else v
                text += (str(v.item()) if v.size == 1 else str(v.asnumpy())) + "\t"
            res.append((step, name, text))
        self.queue = []
        return res

    def toc_print(self):
        """toc(), logged as 'Batch: <step> <name> <statistic>'."""
        for step, name, text in self.toc():
            logging.info("Batch: %7d %-30s %s", step, name, text)
