"""Gluon's data helpers for devices: split a batch and place the pieces."""
from .. import numpy as np


def split_data(data, num_slice, batch_axis=0, even_split=True):
    """`data` cut into `num_slice` pieces along `batch_axis` (MXNet's split_data)."""
    size = data.shape[batch_axis]
    if num_slice < 1:
        raise ValueError(f"[split_data] num_slice must be >= 1, got {num_slice}")
    if even_split and size % num_slice != 0:
        raise ValueError(f"[split_data] data with shape {data.shape} cannot be evenly split into "
                         f"{num_slice} slices along axis {batch_axis}; use even_split=False")
    step = size // num_slice
    if step == 0:
        raise ValueError(f"[split_data] {num_slice} slices of a batch of {size}")
    bounds = [i * step for i in range(num_slice)] + [size]
    index = [slice(None)] * data.ndim
    pieces = []
    for i in range(num_slice):
        index[batch_axis] = slice(bounds[i], bounds[i + 1])
        pieces.append(data[tuple(index)])
    return pieces


def split_and_load(data, ctx_list=None, batch_axis=0, even_split=True, device_list=None):
    """`data` split along `batch_axis` into one piece per device, each piece on its device."""
    devices = device_list if device_list is not None else ctx_list
    if devices is None:
        raise TypeError("[split_and_load] expected a list of devices (device_list or ctx_list)")
    if not isinstance(data, np.ndarray):
        data = np.array(data)
    if len(devices) == 1:
        return [data.to_device(devices[0])]
    pieces = split_data(data, len(devices), batch_axis, even_split)
    return [p.to_device(d) for p, d in zip(pieces, devices)]
