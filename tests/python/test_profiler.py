"""ndx.profiler against MXNet's documented API and the Chrome trace-event format: spans of ops
(counted against the calls made), executor runs, backward and data loading; a trace of a
training step that validates as trace-event JSON; the aggregate table; nothing recorded when
off or paused."""
import json

import numpy as onp
import pytest

import ndx
from ndx import autograd, gluon, np, profiler


@pytest.fixture(autouse=True)
def clean_profiler(tmp_path):
    profiler.set_state("stop")
    profiler.dumps(reset=True)
    profiler.set_config(filename=str(tmp_path / "trace.json"))
    yield
    profiler.set_state("stop")
    profiler.dumps(reset=True)


def _stats():
    return json.loads(profiler.dumps(format="json"))


def test_op_spans_count_the_calls_and_their_output_bytes():
    a = np.ones((3, 4))
    profiler.set_state("run")
    for _ in range(5):
        np.add(a, a)
    np.exp(a)
    profiler.set_state("stop")
    np.add(a, a)  # not recorded
    ops = _stats()["operator"]
    assert ops["_np_add"]["count"] == 5 and ops["_np_exp"]["count"] == 1
    assert ops["_np_add"]["output_bytes"] == 5 * 3 * 4 * 4  # float32 (3, 4) results
    row = ops["_np_add"]
    assert 0 <= row["min_ms"] <= row["avg_ms"] <= row["max_ms"] <= row["total_ms"]


def test_pause_and_resume():
    a = np.ones(3)
    profiler.set_state("run")
    np.add(a, a)
    profiler.pause()
    np.add(a, a)
    np.add(a, a)
    profiler.resume()
    np.add(a, a)
    assert _stats()["operator"]["_np_add"]["count"] == 2
    assert profiler.state() == "run"


def validate_trace_events(doc):
    """The trace-event format's rules for the events we write: an object with a traceEvents
    list; complete events ("X") with name, cat, numeric ts and dur >= 0 (microseconds), and
    integer pid / tid; metadata events ("M") naming a process or thread."""
    assert isinstance(doc, dict) and isinstance(doc["traceEvents"], list)
    assert doc.get("displayTimeUnit", "ms") in ("ms", "ns")
    for e in doc["traceEvents"]:
        assert e["ph"] in ("X", "M"), e
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
        assert isinstance(e["name"], str) and e["name"]
        if e["ph"] == "X":
            assert isinstance(e["cat"], str)
            assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0
            assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0
            assert isinstance(e.get("args", {}), dict)
        else:
            assert e["name"] in ("process_name", "thread_name") and "name" in e["args"]


def test_a_training_step_traces_to_valid_trace_event_json(tmp_path):
    # the demo's pattern: a hybridized CNN, a DataLoader, record / backward / step
    x = onp.random.default_rng(0).random((16, 1, 8, 8), dtype="float32")
    y = onp.arange(16) % 10
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(4, 3, activation="relu"), gluon.nn.Flatten(), gluon.nn.Dense(10))
    net.initialize()
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(x, y), 8)
    profiler.set_config(filename=str(tmp_path / "step.json"), aggregate_stats=True)
    profiler.set_state("run")
    with profiler.scope("train step"):
        for data, label in loader:
            with autograd.record():
                loss = loss_fn(net(data), label)
            loss.backward()
            trainer.step(8)
    profiler.set_state("stop")
    table = profiler.dumps()
    path = profiler.dump()
    with open(path) as f:
        doc = json.load(f)
    validate_trace_events(doc)
    events = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    cats = {e["cat"] for e in events}
    assert {"operator", "executor", "autograd", "data", "python"} <= cats
    assert sum(e["name"] == "backward" for e in events) == 2  # two batches
    assert sum(e["name"] == "DataLoader batch" for e in events) == 2
    assert any(e["name"] == "train step" for e in events)
    # the step's span encloses its ops
    step = next(e for e in events if e["name"] == "train step")
    inner = [e for e in events if e["cat"] == "operator"]
    assert inner and all(step["ts"] <= e["ts"] and e["ts"] + e["dur"] <= step["ts"] +
                         step["dur"] + 1 for e in inner)
    assert "operator" in table and "_npx_convolution" in table
    # dump(finished=True) forgets the events and stops
    assert profiler.state() == "stop" and _stats() == {}


def test_event_objects_and_errors():
    profiler.set_state("run")
    ev = profiler.Event("load weights")
    ev.start()
    ev.stop()
    with pytest.raises(RuntimeError, match="stop\\(\\) without start\\(\\)"):
        ev.stop()
    assert _stats()["python"]["load weights"]["count"] == 1
    with pytest.raises(ValueError, match="state must be 'run' or 'stop'"):
        profiler.set_state("go")
    with pytest.raises(TypeError, match="unknown argument"):
        profiler.set_config(filenme="x.json")
    with pytest.raises(ValueError, match="format must be"):
        profiler.dumps(format="csv")
    with pytest.raises(ValueError, match="sort_by"):
        profiler.dumps(sort_by="name")


def test_mxnet_spelling():
    import ndx as mx
    mx.profiler.set_config(profile_all=True, aggregate_stats=True, filename="x.json")
    mx.profiler.set_state("run")
    mx.np.ones(2) + 1
    mx.profiler.set_state("stop")
    assert "operator" in mx.profiler.dumps(reset=True)


def test_kvstore_calls_are_spans():
    kv = ndx.kv.create("local")
    kv.init(0, np.ones(3))
    profiler.set_state("run")
    kv.push(0, [np.ones(3), np.ones(3)])
    kv.pull(0, out=np.zeros(3))
    kv.pushpull(0, np.ones(3))
    profiler.set_state("stop")
    spans = _stats()["kvstore"]
    assert spans["kvstore.push"]["count"] == 2  # pushpull pushes too
    assert spans["kvstore.pull"]["count"] == 2
    assert spans["kvstore.pushpull"]["count"] == 1
