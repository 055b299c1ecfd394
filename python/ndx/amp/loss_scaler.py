"""Dynamic loss scaling (MXNet's amp.LossScaler)."""
import logging

# One multi_all_finite call takes at most this many arrays (the registry's arity limit).
_CHUNK = 200


class LossScaler:
    """The loss scale AMP multiplies losses by, kept as large as the gradients allow: it
    starts at 2**16, halves after a step whose gradients overflowed (that step's update is
    skipped), and doubles after scale_seq_len (2000) clean steps in a row, up to 2**24.
    The attribute names are MXNet's, which scripts set directly (_scale_seq_len).

    Unlike MXNet, a new scale takes effect at the very next step (MXNet applies it one step
    later, a consequence of its asynchronous engine)."""

    def __init__(self):
        self._loss_scale = 2.0 ** 16
        self._max_loss_scale = 2.0 ** 24
        self._scale_seq_len = 2000
        self._unskipped = 0

    @property
    def loss_scale(self):
        return self._loss_scale

    def has_overflow(self, params):
        """Whether any gradient of params holds inf or NaN; updates the scale."""
        from .. import autograd
        from ..nd import _npi_multi_all_finite
        grads = [g for g in (p.data().grad for p in params) if g is not None]
        finite = True
        with autograd.pause():
            for i in range(0, len(grads), _CHUNK):
                chunk = grads[i:i + _CHUNK]
                flag = _npi_multi_all_finite(*chunk, num_arrays=len(chunk))
                if float(flag[0]) == 0.0:
                    finite = False
                    break
        if not finite:
            self._loss_scale = self._loss_scale / 2.0
            self._unskipped = 0
            logging.info("AMP: decreasing loss scale to %f", self._loss_scale)
            return True
        self._unskipped += 1
        if self._unskipped == self._scale_seq_len:
            self._unskipped = 0
            self._loss_scale = min(self._max_loss_scale, self._loss_scale * 2.0)
            logging.info("AMP: increasing loss scale to %f", self._loss_scale)
        return False
