"""MXNet's FeedForward model (``mx.model.FeedForward``), the training API before Module that
older scripts use: ``FeedForward(symbol, num_epoch=..., learning_rate=...).fit(X, y)`` with
NumPy arrays or DataIters, then ``predict`` / ``score`` / ``save`` / ``FeedForward.load``. It
runs on mx.mod.Module; NumPy input is batched numpy_batch_size at a time (shuffled and rolled
over for training, padded for prediction, as MXNet's)."""
import logging

import numpy as _onp

from . import numpy as _np
from .initializer import Uniform
from .io import DataIter, NDArrayIter

__all__ = ["FeedForward"]


class FeedForward:
    """A symbol trained as a feed-forward model: fit, predict, score, save / load. kwargs
    are the optimizer's parameters (learning_rate, momentum, wd, ...)."""

    def __init__(self, symbol, ctx=None, num_epoch=None, epoch_size=None, optimizer="sgd",
                 initializer=None, numpy_batch_size=128, arg_params=None, aux_params=None,
                 allow_extra_params=False, begin_epoch=0, **kwargs):
        from .sym import Symbol
        if not isinstance(symbol, Symbol):
            raise TypeError(f"[FeedForward] symbol must be a Symbol, got "
                            f"{type(symbol).__name__}")
        if epoch_size is not None:
            raise NotImplementedError("[FeedForward] epoch_size (epochs of a fixed number of "
                                      "batches) is not supported; the data's end ends an epoch")
        self.symbol = symbol
        self.ctx = ctx
        self.num_epoch = num_epoch
        self.optimizer = optimizer
        self.initializer = Uniform(0.01) if initializer is None else initializer
        self.numpy_batch_size = numpy_batch_size
        self.arg_params = arg_params
        self.aux_params = aux_params
        self.allow_extra_params = allow_extra_params
        self.begin_epoch = begin_epoch
        self.kwargs = dict(kwargs)
        self._module = None

    # ---- data ----
    def _iter(self, X, y, is_train):
        if isinstance(X, DataIter):
            if y is not None:
                raise ValueError("[FeedForward] y must be None when X is a DataIter")
            return X
        if isinstance(X, (_np.ndarray, _onp.ndarray)):
            X = X.asnumpy() if isinstance(X, _np.ndarray) else X
            if y is None:
                if is_train:
                    raise ValueError("[FeedForward] y is required to train on an array X")
                y = _onp.zeros(X.shape[0], dtype="float32")
            y = y.asnumpy() if isinstance(y, _np.ndarray) else _onp.asarray(y)
            if y.shape[0] != X.shape[0]:
                raise ValueError(f"[FeedForward] X has {X.shape[0]} examples, y {y.shape[0]}")
            if y.ndim == 2 and y.shape[1] == 1:  # (MXNet's: a column of labels is flattened)
                y = y.reshape(-1)
            batch = min(X.shape[0], self.numpy_batch_size)
            return NDArrayIter(X, y, batch_size=batch, shuffle=is_train,
                               last_batch_handle="roll_over" if is_train else "pad")
        raise TypeError(f"[FeedForward] X must be a NumPy / ndx array or a DataIter, got "
                        f"{type(X).__name__}")

    def _make_module(self, data_iter, logger=None, work_load_list=None):
        from .device import cpu
        from .module import Module
        data_names = [d[0] for d in data_iter.provide_data]
        label_names = [d[0] for d in (data_iter.provide_label or [])]
        label_names = [n for n in label_names if n in self.symbol.list_arguments()]
        return Module(self.symbol, data_names=data_names, label_names=label_names,
                      logger=logger or logging, context=self.ctx or cpu(),
                      work_load_list=work_load_list)

    def _ready_for_inference(self, data_iter):
        if self.arg_params is None:
            raise ValueError("[FeedForward] the model has no parameters yet: fit or load it "
                             "first")
        mod = self._make_module(data_iter)
        mod.bind(data_iter.provide_data, data_iter.provide_label, for_training=False)
        mod.set_params(self.arg_params, self.aux_params or {}, allow_missing=False,
                       allow_extra=self.allow_extra_params)
        return mod

    # ---- training and inference ----
    def fit(self, X, y=None, eval_data=None, eval_metric="acc", epoch_end_callback=None,
            batch_end_callback=None, kvstore="local", logger=None, work_load_list=None,
            monitor=None, eval_end_callback=None, eval_batch_end_callback=None):
        """Trains for epochs begin_epoch .. num_epoch - 1 (Module.fit), starting from
        arg_params / aux_params when given (the initializer fills the rest)."""
        data = self._iter(X, y, is_train=True)
        if isinstance(eval_data, (tuple, list)) and len(eval_data) == 2:  # (MXNet's: either)
            eval_data = self._iter(eval_data[0], eval_data[1], is_train=False)
        elif eval_data is not None:
            eval_data = self._iter(eval_data, None, is_train=False)
        mod = self._make_module(data, logger, work_load_list)
        mod.fit(data, eval_data=eval_data, eval_metric=eval_metric,
                epoch_end_callback=epoch_end_callback, batch_end_callback=batch_end_callback,
                kvstore=kvstore, optimizer=self.optimizer, optimizer_params=self.kwargs,
                eval_end_callback=eval_end_callback,
                eval_batch_end_callback=eval_batch_end_callback, initializer=self.initializer,
                arg_params=self.arg_params, aux_params=self.aux_params,
                allow_missing=self.arg_params is not None, begin_epoch=self.begin_epoch,
                num_epoch=self.num_epoch, monitor=monitor)
        self._module = mod
        self.arg_params, self.aux_params = mod.get_params()
        return self

    def predict(self, X, num_batch=None, return_data=False, reset=True):
        """The outputs over X (padding dropped; one array for one output); with
        return_data also the data and labels read, as MXNet's."""
        data = self._iter(X, None, is_train=False)
        mod = self._ready_for_inference(data)
        outputs, datas, labels = [], [], []
        for outs, _, batch in mod.iter_predict(data, num_batch=num_batch, reset=reset):
            outputs.append([o.asnumpy() for o in outs])
            if return_data:
                n = outs[0].shape[0]
                datas.append(batch.data[0].asnumpy()[:n])
                labels.append(batch.label[0].asnumpy()[:n] if batch.label else None)
        merged = [_onp.concatenate([o[i] for o in outputs]) for i in range(len(outputs[0]))] \
            if outputs else []
        result = merged[0] if len(merged) == 1 else merged
        if return_data:
            return (result, _onp.concatenate(datas),
                    _onp.concatenate(labels) if labels and labels[0] is not None else None)
        return result

    def score(self, X, eval_metric="acc", num_batch=None, batch_end_callback=None,
              reset=True):
        """eval_metric's value over X (a DataIter, with its labels)."""
        if not isinstance(X, DataIter):
            raise TypeError(f"[FeedForward.score] X must be a DataIter (with labels), got "
                            f"{type(X).__name__}")
        data = X
        mod = self._ready_for_inference(data)
        res = mod.score(data, eval_metric, num_batch=num_batch,
                        batch_end_callback=batch_end_callback, reset=reset)
        return res[0][1] if len(res) == 1 else [v for _, v in res]

    # ---- files ----
    def save(self, prefix, epoch=None, remove_amp_cast=True):
        """prefix-symbol.json and prefix-%04d.params (epoch: num_epoch by default;
        remove_amp_cast is MXNet's argument, with no AMP casts to remove here)."""
        from .model import save_checkpoint
        if epoch is None:
            epoch = self.num_epoch
        if epoch is None:
            raise ValueError("[FeedForward.save] give epoch (the model has no num_epoch)")
        save_checkpoint(prefix, epoch, self.symbol, self.arg_params, self.aux_params)

    @staticmethod
    def load(prefix, epoch, ctx=None, **kwargs):
        """A FeedForward of a checkpoint, to predict with or to train on from its epoch."""
        from .model import load_checkpoint
        symbol, arg_params, aux_params = load_checkpoint(prefix, epoch)
        return FeedForward(symbol, ctx=ctx, arg_params=arg_params, aux_params=aux_params,
                           begin_epoch=epoch, **kwargs)

    @staticmethod
    def create(symbol, X, y=None, ctx=None, num_epoch=None, epoch_size=None, optimizer="sgd",
               initializer=None, eval_data=None, eval_metric="acc", epoch_end_callback=None,
               batch_end_callback=None, kvstore="local", logger=None, work_load_list=None,
               eval_end_callback=None, eval_batch_end_callback=None, **kwargs):
        """A FeedForward made and fitted in one call."""
        model = FeedForward(symbol, ctx=ctx, num_epoch=num_epoch, epoch_size=epoch_size,
                            optimizer=optimizer, initializer=initializer, **kwargs)
        return model.fit(X, y, eval_data=eval_data, eval_metric=eval_metric,
                         epoch_end_callback=epoch_end_callback,
                         batch_end_callback=batch_end_callback, kvstore=kvstore,
                         logger=logger, work_load_list=work_load_list,
                         eval_end_callback=eval_end_callback,
                         eval_batch_end_callback=eval_batch_end_callback)
