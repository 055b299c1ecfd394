"""Learning-rate schedules (MXNet's ``mxnet.lr_scheduler``): a scheduler maps ``num_update``,
the largest number of updates any weight has had, to a learning rate.

Each takes ``warmup_steps``, ``warmup_begin_lr`` and ``warmup_mode``: for ``num_update <
warmup_steps`` the rate is ``warmup_begin_lr + (base_lr - warmup_begin_lr) * num_update /
warmup_steps`` ('linear') or ``warmup_begin_lr`` ('constant'), ``base_lr`` being the one given
to the constructor.

As in MXNet, an optimizer built with both ``learning_rate`` and ``lr_scheduler`` overwrites the
scheduler's ``base_lr``: Factor and MultiFactor decay from the new value, while Poly and
Cosine decay from the ``base_lr`` they were built with (their ``base_lr_orig``)."""
import logging
import numbers
from math import cos, pi

__all__ = ["LRScheduler", "FactorScheduler", "MultiFactorScheduler", "PolyScheduler",
           "CosineScheduler"]


def _real(owner, name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"[{owner}] {name} must be a real number, got {type(value).__name__} "
                        f"{value!r}")
    return value


def _int(owner, name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"[{owner}] {name} must be an int, got {type(value).__name__} "
                        f"{value!r}")
    return int(value)


class LRScheduler:
    """Base class: holds base_lr and the warmup; subclasses define __call__(num_update)."""

    def __init__(self, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode="linear"):
        owner = type(self).__name__
        self.base_lr = _real(owner, "base_lr", base_lr)
        self.warmup_steps = _int(owner, "warmup_steps", warmup_steps)
        self.warmup_final_lr = base_lr
        self.warmup_begin_lr = _real(owner, "warmup_begin_lr", warmup_begin_lr)
        if self.warmup_begin_lr > self.warmup_final_lr:
            raise ValueError(f"[{owner}] Base lr has to be higher than warmup_begin_lr: "
                             f"base_lr={base_lr}, warmup_begin_lr={warmup_begin_lr}")
        if self.warmup_steps < 0:
            raise ValueError(f"[{owner}] Warmup steps has to be positive or 0, got "
                             f"{warmup_steps}")
        if warmup_mode not in ("linear", "constant"):
            raise ValueError(f"[{owner}] Supports only linear and constant modes of warmup, "
                             f"got warmup_mode={warmup_mode!r}")
        self.warmup_mode = warmup_mode

    def get_warmup_lr(self, num_update):
        """The rate during warmup (num_update < warmup_steps)."""
        if not num_update < self.warmup_steps:
            raise ValueError(f"[{type(self).__name__}] get_warmup_lr: num_update {num_update} "
                             f"is past the {self.warmup_steps} warmup steps")
        if self.warmup_mode == "linear":
            increase = ((self.warmup_final_lr - self.warmup_begin_lr)
                        * float(num_update) / float(self.warmup_steps))
            return self.warmup_begin_lr + increase
        return self.warmup_begin_lr

    def __call__(self, num_update):
        """The learning rate after `num_update` updates (the most any weight has had)."""
        raise NotImplementedError("must override this")


class FactorScheduler(LRScheduler):
    """base_lr * factor ** floor((num_update - 1) / step), never below stop_factor_lr: the
    rate drops each time num_update passes a multiple of `step`."""

    def __init__(self, step, factor=1, stop_factor_lr=1e-8, base_lr=0.01, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        step = _int("FactorScheduler", "step", step)
        if step < 1:
            raise ValueError(f"[FactorScheduler] Schedule step must be greater or equal than 1 "
                             f"round, got step={step}")
        if _real("FactorScheduler", "factor", factor) > 1.0:
            raise ValueError(f"[FactorScheduler] Factor must be no more than 1 to make lr "
                             f"reduce, got factor={factor}")
        self.step = step
        self.factor = factor
        self.stop_factor_lr = _real("FactorScheduler", "stop_factor_lr", stop_factor_lr)
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        # a loop, not a single step: training resumed at a later num_update catches up
        while num_update > self.count + self.step:
            self.count += self.step
            self.base_lr *= self.factor
            if self.base_lr < self.stop_factor_lr:
                self.base_lr = self.stop_factor_lr
                logging.info("Update[%d]: now learning rate arrived at %0.5e, will not change "
                             "in the future", num_update, self.base_lr)
            else:
                logging.info("Update[%d]: Change learning rate to %0.5e", num_update,
                             self.base_lr)
        return self.base_lr


class MultiFactorScheduler(LRScheduler):
    """base_lr * factor ** k, k being the number of entries of `step` that num_update has
    passed (num_update > step[i])."""

    def __init__(self, step, factor=1, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(step, list) or not step:
            raise TypeError(f"[MultiFactorScheduler] step must be a non-empty list of ints, "
                            f"got {step!r}")
        for i, s in enumerate(step):
            _int("MultiFactorScheduler", f"step[{i}]", s)
            if i != 0 and step[i] <= step[i - 1]:
                raise ValueError(f"[MultiFactorScheduler] Schedule step must be an increasing "
                                 f"integer list, got {step}")
            if s < 1:
                raise ValueError(f"[MultiFactorScheduler] Schedule step must be greater or "
                                 f"equal than 1 round, got {step}")
        if _real("MultiFactorScheduler", "factor", factor) > 1.0:
            raise ValueError(f"[MultiFactorScheduler] Factor must be no more than 1 to make lr "
                             f"reduce, got factor={factor}")
        self.step = step
        self.cur_step_ind = 0
        self.factor = factor
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind < len(self.step) and num_update > self.step[self.cur_step_ind]:
            self.count = self.step[self.cur_step_ind]
            self.cur_step_ind += 1
            self.base_lr *= self.factor
            logging.info("Update[%d]: Change learning rate to %0.5e", num_update, self.base_lr)
        return self.base_lr


def _check_max_update(owner, max_update, warmup_steps):
    max_update = _int(owner, "max_update", max_update)
    if max_update < 1:
        raise ValueError(f"[{owner}] maximum number of updates must be strictly positive, got "
                         f"max_update={max_update}")
    if warmup_steps >= max_update:
        # MXNet divides by max_update - warmup_steps; say so instead of dividing by zero
        raise ValueError(f"[{owner}] warmup_steps ({warmup_steps}) must be smaller than "
                         f"max_update ({max_update})")
    return max_update


class PolyScheduler(LRScheduler):
    """After warmup: final_lr + (base_lr - final_lr) * (1 - (num_update - warmup_steps) /
    (max_update - warmup_steps)) ** pwr, held at final_lr past max_update."""

    def __init__(self, max_update, base_lr=0.01, pwr=2, final_lr=0, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        self.max_update = _check_max_update("PolyScheduler", max_update, self.warmup_steps)
        self.power = _real("PolyScheduler", "pwr", pwr)
        self.base_lr_orig = self.base_lr
        self.final_lr = _real("PolyScheduler", "final_lr", final_lr)
        self.max_steps = self.max_update - self.warmup_steps

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            frac = float(num_update - self.warmup_steps) / float(self.max_steps)
            self.base_lr = (self.final_lr
                            + (self.base_lr_orig - self.final_lr) * pow(1 - frac, self.power))
        else:  # (the curve's value at max_update, also when called there first)
            self.base_lr = self.final_lr
        return self.base_lr


class CosineScheduler(LRScheduler):
    """After warmup: final_lr + (base_lr - final_lr) * (1 + cos(pi * (num_update -
    warmup_steps) / (max_update - warmup_steps))) / 2, held at final_lr past max_update."""

    def __init__(self, max_update, base_lr=0.01, final_lr=0, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        self.max_update = _check_max_update("CosineScheduler", max_update, self.warmup_steps)
        self.base_lr_orig = base_lr
        self.final_lr = _real("CosineScheduler", "final_lr", final_lr)
        self.max_steps = self.max_update - self.warmup_steps

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            frac = (num_update - self.warmup_steps) / self.max_steps
            self.base_lr = (self.final_lr
                            + (self.base_lr_orig - self.final_lr) * (1 + cos(pi * frac)) / 2)
        else:  # (the curve's value at max_update, also when called there first)
            self.base_lr = self.final_lr
        return self.base_lr
