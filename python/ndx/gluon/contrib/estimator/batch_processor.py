"""BatchProcessor: what the Estimator does with one batch (MXNet's
``gluon.contrib.estimator.batch_processor``). Subclass it and override fit_batch /
evaluate_batch for a custom step (several inputs, a model with extra outputs, ...)."""
from .... import autograd
from ...utils import split_and_load

__all__ = ["BatchProcessor"]


def _data_and_label(batch, devices, batch_axis, owner):
    """The batch's data and label, each split along batch_axis into one piece per device."""
    if isinstance(batch, (str, bytes)) or not hasattr(batch, "__getitem__") \
            or not hasattr(batch, "__len__") or len(batch) < 2:
        raise ValueError(f"[{owner}] a batch must be a (data, label) pair, as a DataLoader of "
                         f"an ArrayDataset(data, label) gives, got {type(batch).__name__}")
    data = split_and_load(batch[0], ctx_list=devices, batch_axis=batch_axis)
    label = split_and_load(batch[1], ctx_list=devices, batch_axis=batch_axis)
    return data, label


class BatchProcessor:
    """Trains on (fit_batch) or evaluates (evaluate_batch) one batch of an Estimator: the
    batch is split across estimator.device, and each piece goes through the net and the
    loss. Both return (data, label, pred, loss), lists with one entry per device."""

    def __init__(self):
        pass

    def _get_data_and_label(self, batch, ctx, batch_axis=0):
        return _data_and_label(batch, ctx, batch_axis, type(self).__name__)

    def evaluate_batch(self, estimator, val_batch, batch_axis=0):
        """Predictions of estimator.val_net and losses of estimator.val_loss on the batch
        (nothing recorded)."""
        data, label = self._get_data_and_label(val_batch, estimator.device, batch_axis)
        pred = [estimator.val_net(x) for x in data]
        loss = [estimator.val_loss(y_hat, y) for y_hat, y in zip(pred, label)]
        return data, label, pred, loss

    def fit_batch(self, estimator, train_batch, batch_axis=0):
        """Forward of estimator.net and estimator.loss under autograd, then backward of
        the losses: the gradients are in the parameters' .grad for the trainer's step,
        which GradientUpdateHandler makes at the batch's end."""
        data, label = self._get_data_and_label(train_batch, estimator.device, batch_axis)
        with autograd.record():
            pred = [estimator.net(x) for x in data]
            loss = [estimator.loss(y_hat, y) for y_hat, y in zip(pred, label)]
        autograd.backward(loss)
        return data, label, pred, loss
