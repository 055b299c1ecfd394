"""StochasticBlock: a HybridBlock whose forward also collects losses (a KL term of a
variational layer, say), for Bayesian networks and VAEs."""
import functools

from ...block import HybridBlock

__all__ = ["StochasticBlock", "StochasticSequential"]


class StochasticBlock(HybridBlock):
    """A HybridBlock whose forward, decorated with ``StochasticBlock.collectLoss``, may call
    ``self.add_loss(x)``; after each call the collected losses are in ``self.losses`` and the
    call returns the forward's output alone."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        object.__setattr__(self, "_losses", [])
        object.__setattr__(self, "_losscache", [])
        object.__setattr__(self, "_flag", False)

    def add_loss(self, loss):
        self._losscache.append(loss)

    @staticmethod
    def collectLoss(func):  # noqa: N802 (MXNet's name)
        """Decorates forward: its output becomes ``(output, [losses added during it])``."""

        @functools.wraps(func)
        def inner(self, *args, **kwargs):
            out = func(self, *args, **kwargs)
            collected = self._losscache
            object.__setattr__(self, "_losscache", [])
            object.__setattr__(self, "_flag", True)
            return out, collected

        # (marks the forward as collecting: a hybridized call replays the captured graph
        # without running forward, so __call__ cannot rely on _flag alone then)
        inner._collects_loss = True
        return inner

    def __call__(self, *args, **kwargs):
        object.__setattr__(self, "_flag", False)
        object.__setattr__(self, "_losscache", [])  # (left over if a previous call raised)
        out = super().__call__(*args, **kwargs)
        decorated = getattr(self.forward, "_collects_loss", False)
        if not (self._flag or decorated) or not (isinstance(out, tuple) and len(out) == 2):
            raise ValueError(f"{type(self).__name__}: the forward function should be "
                             "decorated by StochasticBlock.collectLoss")
        object.__setattr__(self, "_losses", list(out[1]))
        return out[0]

    @property
    def losses(self):
        """The losses the last call collected."""
        return self._losses

    def _receive_losses(self, losses):
        """Sets the losses of the last call (a parent's replayed graph computed them)."""
        object.__setattr__(self, "_losses", list(losses))


class StochasticSequential(StochasticBlock):
    """Blocks run in sequence; the losses of the StochasticBlocks among them are collected."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        object.__setattr__(self, "_layers", [])

    def add(self, *blocks):
        """Appends blocks to the sequence."""
        for block in blocks:
            self._layers.append(block)
            self.register_child(block)

    @StochasticBlock.collectLoss
    def forward(self, x, *args):
        for block in self._layers:
            x = block(x, *args)
            args = ()
            if isinstance(x, (tuple, list)):
                args = tuple(x[1:])
                x = x[0]
        if args:
            x = (x,) + tuple(args)
        for block in self._layers:
            if isinstance(block, StochasticBlock):
                self.add_loss(block.losses)
        return x

    def __call__(self, *args, **kwargs):
        out = super().__call__(*args, **kwargs)
        self._hand_down_losses()
        return out

    def _hand_down_losses(self):
        # A hybridized call replays the graph without running the children, whose .losses
        # would still hold the placeholders of the trace: hand them their losses from ours
        # (forward collected one list per StochasticBlock child, in order).
        children = [b for b in self._layers if isinstance(b, StochasticBlock)]
        for block, losses in zip(children, self._losses):
            block._receive_losses(losses)

    def _receive_losses(self, losses):
        super()._receive_losses(losses)
        self._hand_down_losses()

    def __getitem__(self, key):
        layers = self._layers[key]
        if isinstance(layers, list):
            net = type(self)()
            net.add(*layers)
            return net
        return layers

    def __len__(self):
        return len(self._layers)

    def __repr__(self):
        body = "\n".join(f"  ({i}): " + repr(block).replace("\n", "\n  ")
                         for i, block in enumerate(self._layers))
        return f"{type(self).__name__}(\n{body}\n)"
