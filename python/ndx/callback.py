"""MXNet's training callbacks (``mx.callback``), for Module.fit: batch-end callbacks receive a
BatchEndParam (epoch, nbatch, eval_metric, locals), epoch-end callbacks (epoch, symbol,
arg_params, aux_params). They log through the logging module, in MXNet's formats."""
import logging
import math
import time

from . import model as _model

__all__ = ["Speedometer", "ProgressBar", "LogValidationMetricsCallback", "do_checkpoint",
           "module_checkpoint", "log_train_metric"]


def _period(period):
    """MXNet's int(max(1, period)): a number, at least 1."""
    if isinstance(period, bool) or not isinstance(period, (int, float)):
        raise TypeError(f"[callback] period must be a number, got {period!r}")
    return int(max(1, period))


def do_checkpoint(prefix, period=1):
    """An epoch-end callback writing prefix-symbol.json and prefix-%04d.params (numbered
    epoch + 1) every `period` epochs."""
    period = _period(period)

    def _callback(iter_no, sym, arg, aux):
        if (iter_no + 1) % period == 0:
            _model.save_checkpoint(prefix, iter_no + 1, sym, arg, aux)
    return _callback


def module_checkpoint(mod, prefix, period=1, save_optimizer_states=False):
    """An epoch-end callback calling mod.save_checkpoint(prefix, epoch + 1, ...) every
    `period` epochs."""
    period = _period(period)

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            mod.save_checkpoint(prefix, iter_no + 1, save_optimizer_states)
    return _callback


def log_train_metric(period, auto_reset=False):
    """A batch-end callback logging 'Iter[e] Batch[n] Train-<name>=<value>' every `period`
    batches (and starting the metric's local statistics over with auto_reset)."""
    period = _period(period)

    def _callback(param):
        if param.nbatch % period == 0 and param.eval_metric is not None:
            for name, value in param.eval_metric.get_name_value():
                logging.info("Iter[%d] Batch[%d] Train-%s=%f", param.epoch, param.nbatch,
                             name, value)
            if auto_reset:
                param.eval_metric.reset_local()
    return _callback


class Speedometer:
    """Logs the training speed (samples/s over the last `frequent` batches of batch_size)
    and the metric every `frequent` batches; with auto_reset the metric's local statistics
    start over after each log, so each line shows the last `frequent` batches."""

    def __init__(self, batch_size, frequent=50, auto_reset=True):
        self.batch_size = batch_size
        self.frequent = _period(frequent)
        self.auto_reset = auto_reset
        self.init = False
        self.tic = 0.0
        self.last_count = 0

    def __call__(self, param):
        count = param.nbatch
        if self.last_count > count:  # (a new epoch)
            self.init = False
        self.last_count = count
        if not self.init:
            self.init = True
            self.tic = time.time()
            return
        if count % self.frequent != 0:
            return
        elapsed = time.time() - self.tic
        speed = self.frequent * self.batch_size / elapsed if elapsed > 0 else float("inf")
        if param.eval_metric is not None:
            name_value = param.eval_metric.get_name_value()
            first = count - self.frequent if self.auto_reset else 0
            if self.auto_reset:
                param.eval_metric.reset_local()
            msg = "Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec" + \
                "\t%s=%f" * len(name_value)
            logging.info(msg, param.epoch, first, count, speed,
                         *[x for pair in name_value for x in pair])
        else:
            logging.info("Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec", param.epoch, count,
                         speed)
        self.tic = time.time()


class ProgressBar:
    """Logs a progress bar of `length` characters over `total` batches."""

    def __init__(self, total, length=80):
        if total <= 0:
            raise ValueError(f"[callback.ProgressBar] total must be > 0, got {total!r}")
        self.bar_len = length
        self.total = total

    def __call__(self, param):
        count = param.nbatch
        filled = int(round(self.bar_len * count / float(self.total)))
        percents = math.ceil(100.0 * count / float(self.total))
        logging.info("[%s] %s%s\r", "=" * filled + "-" * (self.bar_len - filled), percents,
                     "%")


class LogValidationMetricsCallback:
    """An eval-end callback logging 'Epoch[e] Validation-<name>=<value>'."""

    def __call__(self, param):
        if param.eval_metric is None:
            return
        for name, value in param.eval_metric.get_name_value():
            logging.info("Epoch[%d] Validation-%s=%f", param.epoch, name, value)
