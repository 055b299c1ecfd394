"""The executors of a Module: one per device, each running a slice of the batch (MXNet's
DataParallelExecutorGroup). Parameters live on every device; Module.update keeps the copies
equal (through a KVStore when there are several)."""
import logging

from .. import numpy as _np
from ..base import NDXRuntimeError
from ..io import DataDesc

__all__ = ["DataParallelExecutorGroup"]


def _split_input_slice(batch_size, work_load_list):
    """Slices of the batch in proportion to work_load_list (the last takes the rounding
    remainder); a device left without examples is a ValueError."""
    total = float(sum(work_load_list))
    sizes = [int(round(w * batch_size / total)) for w in work_load_list]
    if sum(sizes) < batch_size:
        sizes[-1] += batch_size - sum(sizes)
    slices, end = [], 0
    for size in sizes:
        begin = min(end, batch_size)
        end = min(begin + size, batch_size)
        if begin >= end:
            raise ValueError(f"[Module] a batch of {batch_size} cannot be split over "
                             f"{len(work_load_list)} devices with work loads "
                             f"{list(work_load_list)}: some would get no examples")
        slices.append(slice(begin, end))
    return slices


def _batch_axis(desc):
    return DataDesc.get_batch_axis(getattr(desc, "layout", None))


def _take(array, axis, part):
    """array's part `part` (a slice) along `axis` (the whole array for a full slice)."""
    if axis < 0 or (part.start == 0 and part.stop == array.shape[axis]):
        return array
    index = [slice(None)] * array.ndim
    index[axis] = part
    return array[tuple(index)]


def _merge(arrays, axis=0):
    """One array from the per-device parts (the part itself for one device)."""
    if len(arrays) == 1:
        return arrays[0]
    return _np.concatenate([a.to_device(arrays[0].device) for a in arrays], axis=axis)


class DataParallelExecutorGroup:
    """Executors of `symbol` on each of `contexts`, each bound to its slice of the batch.

    data_shapes / label_shapes are DataDescs; param_names are the arguments that are
    parameters (the rest are data, labels and states). Gradients are kept for the
    parameters (not those in fixed_param_names) when for_training, and for the data when
    inputs_need_grad."""

    def __init__(self, symbol, contexts, workload, data_shapes, label_shapes, param_names,
                 for_training, inputs_need_grad, shared_group=None, logger=logging,
                 fixed_param_names=None, grad_req="write", state_names=None):
        self.symbol = symbol
        self.contexts = list(contexts)
        self.workload = list(workload)
        self.param_names = list(param_names)
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self.output_names = symbol.list_outputs()
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.logger = logger
        self.fixed_param_names = list(fixed_param_names or [])
        self.state_names = list(state_names or [])
        self.shared_group = shared_group
        self.data_names = [d.name for d in data_shapes]
        self.grad_req = self._grad_reqs(grad_req)
        self.execs = []
        self._monitor = None
        self.bind_exec(data_shapes, label_shapes, shared_group)

    def _grad_reqs(self, grad_req):
        if not self.for_training:
            return dict.fromkeys(self.arg_names, "null")
        if isinstance(grad_req, (list, tuple)):
            if len(grad_req) != len(self.arg_names):
                raise ValueError(f"[Module.bind] grad_req has {len(grad_req)} entries; the "
                                 f"symbol has {len(self.arg_names)} arguments")
            return dict(zip(self.arg_names, grad_req))
        if isinstance(grad_req, dict):
            return {n: grad_req.get(n, "null") for n in self.arg_names}
        if not isinstance(grad_req, str):
            raise TypeError(f"[Module.bind] grad_req must be a str, list or dict, got "
                            f"{type(grad_req).__name__}")
        reqs = {}
        for name in self.arg_names:
            if name in self.param_names:
                reqs[name] = "null" if name in self.fixed_param_names else grad_req
            elif name in self.data_names:
                reqs[name] = grad_req if self.inputs_need_grad else "null"
            else:  # labels and states
                reqs[name] = "null"
        return reqs

    # ---- binding ----
    def bind_exec(self, data_shapes, label_shapes, shared_group=None, reshape=False):
        """Binds (or, with reshape, re-binds for new shapes sharing the arrays) the
        executors for data_shapes / label_shapes (lists of DataDesc)."""
        label_shapes = [d for d in (label_shapes or []) if d.name in self.arg_names]
        self.data_shapes, self.label_shapes = list(data_shapes), label_shapes
        self.data_names = [d.name for d in self.data_shapes]
        self.label_names = [d.name for d in label_shapes]
        first = self.data_shapes[0]
        axis = _batch_axis(first)
        self.batch_size = first.shape[axis] if axis >= 0 else None
        if self.batch_size is None:
            self.slices = [slice(None)] * len(self.contexts)
            if len(self.contexts) > 1:
                raise ValueError(f"[Module.bind] data '{first.name}' has layout "
                                 f"{first.layout!r} without a batch axis N; it cannot be "
                                 f"split over {len(self.contexts)} devices")
        else:
            self.slices = _split_input_slice(self.batch_size, self.workload)
            for desc in self.data_shapes + label_shapes:
                axis = _batch_axis(desc)
                if axis >= 0 and (axis >= len(desc.shape) or
                                  desc.shape[axis] != self.batch_size):
                    raise ValueError(
                        f"[Module.bind] all data must have the same batch size: batch_size = "
                        f"{self.batch_size} (axis {_batch_axis(first)} of '{first.name}'), "
                        f"but '{desc.name}' has shape {tuple(desc.shape)} (batch axis "
                        f"{axis}); give DataDesc(name, shape, layout=...) for inputs whose "
                        f"batch axis is not 0")
        self.data_layouts = [_batch_axis(d) for d in self.data_shapes]
        self.label_layouts = [_batch_axis(d) for d in label_shapes]
        execs = []
        for i, ctx in enumerate(self.contexts):
            shapes, types = self._sliced_shapes(i)
            if reshape:
                execs.append(self.execs[i].reshape(allow_up_sizing=True,
                                                   **self._with_labels(shapes)))
                continue
            exe = self.symbol._simple_bind(ctx, grad_req=self.grad_req, type_dict=types,
                                           **shapes)
            if shared_group is not None:
                exe._share_arrays(shared_group.execs[i], self.param_names + self.aux_names)
            execs.append(exe)
        self.execs = execs
        if self._monitor is not None:
            for exe in execs:
                self._monitor.install(exe)
        self._collect_arrays()

    def _with_labels(self, shapes):
        """shapes plus the inferred new shapes of the labels not given (a batch without
        labels, as predict's, re-binds the labels to its size rather than failing)."""
        missing = [n for n in self.arg_names if n not in shapes and n not in self.param_names
                   and n not in self.state_names]
        if not missing:
            return shapes
        arg_shapes, _, _ = self.symbol.infer_shape_partial(**shapes)
        shapes = dict(shapes)
        for name, shape in zip(self.arg_names, arg_shapes):
            if name in missing and shape and all(d > 0 for d in shape):
                shapes[name] = tuple(shape)
        return shapes

    def _sliced_shapes(self, i):
        shapes, types = {}, {}
        for desc in self.data_shapes + self.label_shapes:
            shape = list(desc.shape)
            axis = _batch_axis(desc)
            if axis >= 0 and self.batch_size is not None:
                part = self.slices[i]
                shape[axis] = part.stop - part.start
            shapes[desc.name] = tuple(shape)
            types[desc.name] = getattr(desc, "dtype", "float32")
        return shapes, types

    def _collect_arrays(self):
        params = [n for n in self.arg_names if n in self.param_names]
        self.param_arrays = [[e.arg_dict[n] for e in self.execs] for n in params]
        self.grad_arrays = [[e.grad_dict[n] for e in self.execs] for n in params]
        if not self.for_training or all(g[0] is None for g in self.grad_arrays):
            self.grad_arrays = [[None] * len(self.execs) for _ in params]
        self.aux_arrays = [[e.aux_dict[n] for e in self.execs] for n in self.aux_names]
        self.state_arrays = [[e.arg_dict[n] for e in self.execs] for n in self.state_names]
        self.input_grad_arrays = [[e.grad_dict[n] for e in self.execs]
                                  for n in self.data_names] if self.inputs_need_grad else []

    def reshape(self, data_shapes, label_shapes):
        """Re-binds for new input shapes; the parameters stay the same arrays."""
        if [tuple(d.shape) for d in data_shapes] == [tuple(d.shape) for d in self.data_shapes] \
                and [tuple(d.shape) for d in (label_shapes or [])
                     if d.name in self.arg_names] == \
                [tuple(d.shape) for d in self.label_shapes]:
            return
        self.bind_exec(data_shapes, label_shapes, reshape=True)

    def install_monitor(self, mon):
        if not callable(getattr(mon, "install", None)):
            raise TypeError(f"[Module.install_monitor] expected an mx.mon.Monitor, got "
                            f"{type(mon).__name__}")
        self._monitor = mon
        for exe in self.execs:
            mon.install(exe)

    # ---- parameters ----
    def set_params(self, arg_params, aux_params, allow_extra=False):
        """Copies the values by name into every device's arrays."""
        for exe in self.execs:
            exe.copy_params_from(arg_params, aux_params, allow_extra_params=allow_extra)

    def get_params(self, arg_params, aux_params):
        """Writes the devices' mean of each parameter and auxiliary state into the arrays of
        arg_params / aux_params (cast to their dtypes)."""
        params = [n for n in self.arg_names if n in self.param_names]
        for names, arrays, out in ((params, self.param_arrays, arg_params),
                                   (self.aux_names, self.aux_arrays, aux_params)):
            for name, block in zip(names, arrays):
                dst = out[name]
                total = block[0].to_device(dst.device)
                for a in block[1:]:
                    total = total + a.to_device(dst.device)
                if len(block) > 1:
                    total = total / len(block)
                dst[...] = total.astype(dst.dtype)

    # ---- running ----
    def forward(self, data_batch, is_train=None):
        """Loads the batch's slices into the executors and runs them."""
        if is_train is None:
            is_train = self.for_training
        if is_train and not self.for_training:
            raise NDXRuntimeError("[Module.forward] is_train=True on a module bound with "
                                  "for_training=False; bind again with "
                                  "for_training=True (force_rebind=True)")
        data = list(data_batch.data)
        if len(data) != len(self.data_names):
            raise ValueError(f"[Module.forward] the batch has {len(data)} data arrays; the "
                             f"module's data are {self.data_names}")
        labels = list(getattr(data_batch, "label", None) or []) if self.label_names else []
        if labels and len(labels) < len(self.label_names):
            raise ValueError(f"[Module.forward] the batch has {len(labels)} label arrays; "
                             f"the module's labels are {self.label_names}")
        for i, exe in enumerate(self.execs):
            part = self.slices[i]
            inputs = {n: _take(_as_nd(a), axis, part)
                      for n, a, axis in zip(self.data_names, data, self.data_layouts)}
            inputs.update({n: _take(_as_nd(a), axis, part)
                           for n, a, axis in zip(self.label_names, labels,
                                                 self.label_layouts)})
            exe.forward(is_train=is_train, **inputs)

    def backward(self, out_grads=None):
        """Back-propagates through every executor (out_grads sliced along axis 0)."""
        if not self.for_training:
            raise NDXRuntimeError("[Module.backward] the module is bound with "
                                  "for_training=False; bind again with for_training=True "
                                  "(force_rebind=True)")
        if out_grads is not None and not isinstance(out_grads, (list, tuple)):
            out_grads = [out_grads]
        for i, exe in enumerate(self.execs):
            grads = None
            if out_grads is not None:
                grads = [_take(_as_nd(g), 0, self.slices[i]) if g.ndim else g
                         for g in out_grads]
            exe.backward(out_grads=grads)

    def get_outputs(self, merge_multi_context=True):
        outputs = [[exe.outputs[i] for exe in self.execs]
                   for i in range(len(self.output_names))]
        return [_merge(o) for o in outputs] if merge_multi_context else outputs

    def get_output_shapes(self):
        shapes = []
        for i, (name, out) in enumerate(zip(self.output_names, self.execs[0].outputs)):
            shape = list(out.shape)
            if shape and len(self.execs) > 1:  # (the merged outputs' axis 0)
                shape[0] = sum(e.outputs[i].shape[0] for e in self.execs)
            shapes.append((name, tuple(shape)))
        return shapes

    def get_input_grads(self, merge_multi_context=True):
        if not self.inputs_need_grad:
            raise NDXRuntimeError("[Module.get_input_grads] bind with inputs_need_grad=True "
                                  "to get the gradients of the inputs")
        grads = self.input_grad_arrays
        return [_merge(g, a) for g, a in zip(grads, self.data_layouts)] \
            if merge_multi_context else grads

    def get_states(self, merge_multi_context=True):
        return [_merge(s) for s in self.state_arrays] if merge_multi_context \
            else self.state_arrays

    def set_states(self, states=None, value=None):
        if states is not None and value is not None:
            raise ValueError("[Module.set_states] give states or value, not both")
        if value is not None:
            for block in self.state_arrays:
                for a in block:
                    a[...] = value
            return
        if states is None:
            raise ValueError("[Module.set_states] give states or value")
        for block, new in zip(self.state_arrays, states):
            for a, v in zip(block, new if isinstance(new, (list, tuple)) else [new]):
                a[...] = _as_nd(v)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Updates eval_metric with each device's outputs and its slice of the labels."""
        labels = list(labels or [])
        for i, exe in enumerate(self.execs):
            if pre_sliced:
                part = labels[i]
            else:
                layouts = self.label_layouts + [0] * (len(labels) - len(self.label_layouts))
                part = [_take(_as_nd(lab), axis, self.slices[i])
                        for lab, axis in zip(labels, layouts)]
            names = self.label_names or [f"label{j}" for j in range(len(part))]
            eval_metric.update_dict(dict(zip(names, part)),
                                    dict(zip(self.output_names, exe.outputs)))


def _as_nd(value):
    """An ndx array from a batch entry (ndx, NumPy or nested lists)."""
    if isinstance(value, _np.ndarray):
        return value
    return _np.array(value)
