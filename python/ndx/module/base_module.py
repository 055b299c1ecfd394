"""BaseModule: what every module shares -- the training loop (fit), evaluation (score) and
prediction (predict, iter_predict) over MXNet's DataIter / DataBatch, written once over the
intermediate API (bind, init_params, init_optimizer, forward, backward, update, ...) that
Module and BucketingModule implement."""
import logging
import time
from collections import namedtuple

import numpy as _onp

from .. import metric as _metric
from .. import model as _model
from .. import nd as _nd
from .. import numpy as _np
from ..base import NDXRuntimeError
from ..initializer import Uniform
from ..io import DataBatch, DataDesc, DataIter

__all__ = ["BaseModule", "BatchEndParam"]

# What batch_end_callback and eval callbacks receive (MXNet's mx.model.BatchEndParam).
BatchEndParam = namedtuple("BatchEndParams", ["epoch", "nbatch", "eval_metric", "locals"])


def _as_list(obj):
    return obj if isinstance(obj, list) else [obj]


def _as_metric(eval_metric):
    return eval_metric if isinstance(eval_metric, _metric.EvalMetric) \
        else _metric.create(eval_metric)


def _check_input_names(symbol, names, typename, throw):
    """Names the module's data / labels / states / fixed params must be arguments of the
    symbol: a ValueError naming the candidates (a warning for labels, as in MXNet)."""
    args = symbol.list_arguments()
    for name in names:
        if name in args:
            continue
        candidates = [a for a in args if not (a.endswith("_weight") or a.endswith("_bias") or
                                              a.endswith("_gamma") or a.endswith("_beta"))]
        msg = (f"[Module] {typename}_names has '{name}', which is not among the symbol's "
               f"arguments; did you mean one of {candidates}?")
        if throw:
            raise ValueError(msg)
        logging.warning(msg)


def parse_data_desc(data_names, label_names, data_shapes, label_shapes):
    """data_shapes / label_shapes as lists of DataDesc ((name, shape) pairs allowed), their
    names checked against data_names / label_names."""
    def descs(shapes, what):
        if shapes is None:
            return None
        if not isinstance(shapes, (list, tuple)):
            raise TypeError(f"[Module.bind] {what} must be a list of (name, shape) or "
                            f"DataDesc, got {type(shapes).__name__}")
        out = []
        for item in shapes:
            if isinstance(item, DataDesc):
                out.append(item)
            elif isinstance(item, (list, tuple)) and len(item) == 2 and \
                    isinstance(item[0], str):
                out.append(DataDesc(item[0], tuple(int(d) for d in item[1])))
            else:
                raise TypeError(f"[Module.bind] each entry of {what} must be (name, shape) "
                                f"or a DataDesc, got {item!r}")
        return out

    data_shapes = descs(data_shapes, "data_shapes")
    if not data_shapes:
        raise ValueError("[Module.bind] data_shapes is empty")
    if sorted(d.name for d in data_shapes) != sorted(data_names):
        raise ValueError(f"[Module.bind] data_shapes name {[d.name for d in data_shapes]}; "
                         f"the module's data_names are {list(data_names)}")
    label_shapes = descs(label_shapes, "label_shapes")
    if label_shapes is not None and sorted(d.name for d in label_shapes) != \
            sorted(label_names):
        logging.warning("[Module.bind] label_shapes name %s; the module's label_names are %s",
                        [d.name for d in label_shapes], list(label_names))
    return data_shapes, label_shapes


class BaseModule:
    """The module interface and its loops. A subclass implements bind, init_params,
    get_params, set_params, init_optimizer, forward, backward, update, get_outputs,
    get_input_grads, update_metric and the name / shape properties."""

    def __init__(self, logger=logging):
        self.logger = logger
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol = None
        self._total_exec_bytes = 0

    def _require(self, binded=True, params=False, optimizer=False, what=""):
        if binded and not self.binded:
            raise NDXRuntimeError(f"[{type(self).__name__}.{what}] call bind() first")
        if params and not self.params_initialized:
            raise NDXRuntimeError(f"[{type(self).__name__}.{what}] call init_params() (or "
                                  f"set_params()) first")
        if optimizer and not self.optimizer_initialized:
            raise NDXRuntimeError(f"[{type(self).__name__}.{what}] call init_optimizer() "
                                  f"first")

    # ---- high-level API ----
    def forward_backward(self, data_batch):
        """forward(is_train=True) and backward() on one batch."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def score(self, eval_data, eval_metric, num_batch=None, batch_end_callback=None,
              score_end_callback=None, reset=True, epoch=0, sparse_row_id_fn=None):
        """Runs eval_data (a DataIter) through the module and returns eval_metric's
        [(name, value)] over it (num_batch batches at most)."""
        self._require(params=True, what="score")
        if reset:
            eval_data.reset()
        eval_metric = _as_metric(eval_metric)
        eval_metric.reset()
        actual_num_batch = 0
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            self.update_metric(eval_metric, eval_batch.label)
            if batch_end_callback is not None:
                params = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                                       locals=locals())
                for callback in _as_list(batch_end_callback):
                    callback(params)
            actual_num_batch += 1
        if score_end_callback:
            params = BatchEndParam(epoch=epoch, nbatch=actual_num_batch,
                                   eval_metric=eval_metric, locals=locals())
            for callback in _as_list(score_end_callback):
                callback(params)
        return eval_metric.get_global_name_value()

    def iter_predict(self, eval_data, num_batch=None, reset=True, sparse_row_id_fn=None):
        """Yields (outputs without the batch's padding, batch number, batch)."""
        self._require(params=True, what="iter_predict")
        if reset:
            eval_data.reset()
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            pad = eval_batch.pad or 0
            outputs = [out[0:out.shape[0] - pad] for out in self.get_outputs()]
            yield outputs, nbatch, eval_batch

    def predict(self, eval_data, num_batch=None, merge_batches=True, reset=True,
                always_output_list=False, sparse_row_id_fn=None):
        """The outputs over eval_data (a DataIter, or one array: one forward), the padding
        of the last batch dropped; merged over the batches (one array for a single output
        unless always_output_list) or, without merge_batches, a list per batch."""
        self._require(params=True, what="predict")
        if isinstance(eval_data, (_np.ndarray, _nd.NDArray, _onp.ndarray)):
            self.forward(DataBatch([_np.array(eval_data)]), is_train=False)
            return self.get_outputs()[0]
        if not isinstance(eval_data, DataIter):
            raise TypeError(f"[{type(self).__name__}.predict] eval_data must be an array or a "
                            f"DataIter, got {type(eval_data).__name__}")
        output_list = [[out.copy() for out in outputs] for outputs, _, _ in
                       self.iter_predict(eval_data, num_batch, reset, sparse_row_id_fn)]
        if not output_list or not merge_batches:
            return output_list
        num_outputs = len(output_list[0])
        if any(len(out) != num_outputs for out in output_list):
            raise ValueError("Cannot merge batches, as num of outputs is not the same in "
                             "mini-batches. Maybe bucketing is used?")
        merged = [_np.concatenate([out[i] for out in output_list])
                  for i in range(num_outputs)]
        if num_outputs == 1 and not always_output_list:
            return merged[0]
        return merged

    def fit(self, train_data, eval_data=None, eval_metric="acc", epoch_end_callback=None,
            batch_end_callback=None, kvstore="local", optimizer="sgd",
            optimizer_params=(("learning_rate", 0.01),), eval_end_callback=None,
            eval_batch_end_callback=None, initializer=None, arg_params=None,
            aux_params=None, allow_missing=False, force_rebind=False, force_init=False,
            begin_epoch=0, num_epoch=None, validation_metric=None, monitor=None,
            sparse_row_id_fn=None):
        """Trains on train_data (a DataIter) for epochs begin_epoch .. num_epoch - 1: binds,
        initializes the parameters (Uniform(0.01) unless initializer, arg_params /
        aux_params given) and the optimizer, then per batch forward, backward, update and
        the metric; logs 'Epoch[n] Train-<metric>=...' and 'Time cost', calls the callbacks
        and, with eval_data, logs 'Epoch[n] Validation-<metric>=...'."""
        if num_epoch is None:
            raise ValueError(f"[{type(self).__name__}.fit] please specify number of epochs "
                             f"(num_epoch)")
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=Uniform(0.01) if initializer is None else initializer,
                         arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                            optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        eval_metric = _as_metric(eval_metric)

        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            eval_metric.reset()
            nbatch = 0
            data_iter = iter(train_data)
            end_of_batch = False
            try:
                next_data_batch = next(data_iter)
            except StopIteration:
                # (an iterator a score() or an earlier loop used up: MXNet stops here with
                # StopIteration; it is read from its start instead)
                train_data.reset()
                data_iter = iter(train_data)
                try:
                    next_data_batch = next(data_iter)
                except StopIteration:
                    raise ValueError(f"[{type(self).__name__}.fit] train_data yields no "
                                     f"batches") from None
            eval_name_vals = []
            while not end_of_batch:
                data_batch = next_data_batch
                if monitor is not None:
                    monitor.tic()
                self.forward_backward(data_batch)
                self.update()
                self.update_metric(eval_metric, data_batch.label)
                try:
                    next_data_batch = next(data_iter)
                    self.prepare(next_data_batch, sparse_row_id_fn=sparse_row_id_fn)
                except StopIteration:
                    end_of_batch = True
                if monitor is not None:
                    monitor.toc_print()
                if end_of_batch:
                    eval_name_vals = eval_metric.get_global_name_value()
                if batch_end_callback is not None:
                    params = BatchEndParam(epoch=epoch, nbatch=nbatch,
                                           eval_metric=eval_metric, locals=locals())
                    for callback in _as_list(batch_end_callback):
                        callback(params)
                nbatch += 1
            for name, val in eval_name_vals:
                self.logger.info("Epoch[%d] Train-%s=%f", epoch, name, val)
            self.logger.info("Epoch[%d] Time cost=%.3f", epoch, time.time() - tic)

            # (the module's own copies of the parameters brought up to date)
            arg_params_now, aux_params_now = self.get_params()
            self.set_params(arg_params_now, aux_params_now)
            if epoch_end_callback is not None:
                for callback in _as_list(epoch_end_callback):
                    callback(epoch, self.symbol, arg_params_now, aux_params_now)
            if eval_data:
                res = self.score(eval_data, validation_metric,
                                 score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, val in res:
                    self.logger.info("Epoch[%d] Validation-%s=%f", epoch, name, val)
            train_data.reset()

    # ---- symbol and parameters ----
    @property
    def symbol(self):
        """The symbol of the module (its current bucket's for a BucketingModule)."""
        return self._symbol

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Gets ready for data_batch: a module with a current one (BucketingModule) asks
        it (Module.prepare checks sparse_row_id_fn; its executors hold whole weights)."""
        current = getattr(self, "_curr_module", None)
        if current is not None:
            current.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)

    def save_params(self, fname):
        """Writes the parameters as MXNet's 'arg:<name>' / 'aux:<name>' .params file."""
        _model.save_params_file(fname, *self.get_params())

    def load_params(self, fname):
        """Reads a .params file save_params (or MXNet) wrote into the module."""
        self.set_params(*_model.load_params_file(fname, f"{type(self).__name__}.load_params"))

    def install_monitor(self, mon):
        raise NotImplementedError(f"[{type(self).__name__}.install_monitor] is not "
                                  f"supported by this module")

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Sets the parameters from name -> array dicts (init_params without an
        initializer)."""
        self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init,
                         allow_extra=allow_extra)

    def get_states(self, merge_multi_context=True):
        """The state arrays (state_names): none unless the module has states."""
        self._require(params=True, what="get_states")
        return []

    def set_states(self, states=None, value=None):
        self._require(params=True, what="set_states")
