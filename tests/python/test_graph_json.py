"""Graph JSON from outside: malformed text, wrong field types, bad node references, unknown ops,
huge numbers, deep nesting and nodes whose inputs do not fit their op all raise ValueError (or
TypeError) in ndx's words, naming the byte, or the node and the field; none crashes or quotes
the JSON library's own messages."""
import json
import random

import numpy as onp
import pytest

from ndx import np, sym

TYPED = (ValueError, TypeError, IndexError, NotImplementedError, MemoryError, ZeroDivisionError)


def node(op, name, inputs=(), attrs=None):
    d = {"op": op, "name": name, "inputs": [list(i) for i in inputs]}
    if attrs is not None:
        d["attrs"] = attrs
    return d


def doc(nodes, heads):
    return json.dumps({"nodes": nodes, "arg_nodes": [], "heads": heads})


def load_error(text, match, kind=ValueError):
    with pytest.raises(kind, match=match) as info:
        sym.load_json(text)
    assert "json.exception" not in str(info.value) and "parse_error" not in str(info.value)
    return info.value


X = node("null", "x")


@pytest.mark.parametrize("text,byte,reason", [
    ("", 0, "unexpected end of input"),
    ("tru", 3, "unexpected end of input"),
    ("trux", 3, "unexpected character 'x'"),
    ("[1,]", 3, "unexpected character ']'"),
    ('{"a" 1}', 5, "unexpected character '1'"),
    ('{"nodes": [], "heads": []} x', 27, "unexpected character 'x'"),
    ('["a\x01"]', 3, "unexpected byte 0x01"),
    ("[1,\n 2,\n @]", 9, "unexpected character '@'"),
    ('{"nodes": [], "heads": [[1e400, 0]]}', 29, "the number 1e400 is out of range"),
    ('{"nodes": [], "heads": []}\0garbage', 26, "unexpected byte 0x00"),
])
def test_invalid_json_names_the_byte(text, byte, reason):
    load_error(text, rf"^\[graph_from_json\] invalid JSON at byte {byte}: {reason}$")


@pytest.mark.parametrize("text", [
    "[" * 100_000,
    "[" * 100_000 + "]" * 100_000,
    '{"a":' * 100_000 + "1" + "}" * 100_000,
    doc([node("null", "x", attrs={"deep": "@"})], [[0, 0]]).replace(
        '"@"', "[" * 100_000 + "]" * 100_000),
])
def test_deep_nesting_is_refused_before_parsing(text):
    load_error(text, r"invalid JSON at byte \d+: nested deeper than 128 levels")


def test_brackets_inside_strings_are_not_nesting():
    name = "[" * 1000 + '"{' * 500 + "\\"
    g = sym.load_json(doc([node("null", name)], [[0, 0]]))
    assert g.list_arguments() == [name]


@pytest.mark.parametrize("text,match", [
    ("[1, 2]", r"document: expected an object with 'nodes' and 'heads', got a list"),
    ('{"heads": []}', r"document: no field 'nodes'"),
    ('{"nodes": {}, "heads": []}', r"document: field 'nodes' must be a list, got an object"),
    ('{"nodes": [], "heads": 3}', r"document: field 'heads' must be a list, got an integer"),
    (doc([7], []), r"node 0: expected an object, got an integer"),
    (doc([{"name": "x"}], []), r"node 0 \('x'\): no field 'op'"),
    (doc([{"op": 3}], []), r"node 0: field 'op' must be a string, got an integer"),
    (doc([{"op": "null", "name": 5}], []), r"node 0: field 'name' must be a string, got an int"),
    (doc([X, node("_np_exp", "e", [(0, 0)], attrs=[1])], [[1, 0]]),
     r"node 1 \('e'\): field 'attrs' must be an object, got a list"),
    (doc([X, node("_np_sum", "s", [(0, 0)], attrs={"axis": 1})], [[1, 0]]),
     r"node 1 \('s'\): field 'attrs.axis' must be a string, got an integer"),
    (doc([X, {"op": "_np_exp", "name": "e", "inputs": {"a": 1}}], [[1, 0]]),
     r"node 1 \('e'\): field 'inputs' must be a list, got an object"),
    (doc([X, node("_np_exp", "e", [(0,)])], [[1, 0]]),
     r"node 1 \('e'\): field 'inputs\[0\]' must be \[node, output\] or \[node, output, version\]"),
    (doc([X, {"op": "_np_exp", "name": "e", "inputs": [[0.5, 0]]}], [[1, 0]]),
     r"node 1 \('e'\): field 'inputs\[0\]\[0\]' must be an integer, got a number with a fract"),
    (doc([X, {"op": "_np_exp", "name": "e", "inputs": [["0", 0]]}], [[1, 0]]),
     r"node 1 \('e'\): field 'inputs\[0\]\[0\]' must be an integer, got a string"),
    (doc([X], ["a"]), r"document: field 'heads\[0\]' must be \[node, output\]"),
    (doc([X], [[0, None]]), r"document: field 'heads\[0\]\[1\]' must be an integer, got null"),
])
def test_wrong_field_types_name_the_node_and_field(text, match):
    load_error(text, r"^\[graph_from_json\] " + match)


@pytest.mark.parametrize("inputs,match", [
    ([(1, 0)], r"inputs\[0\] refers to node 1, which is not defined before it"),  # itself: a cycle
    ([(2, 0)], r"inputs\[0\] refers to node 2, which is not defined before it"),  # forward
    ([(-1, 0)], r"inputs\[0\] refers to node -1"),
    ([(0, 1)], r"inputs\[0\] uses output 1 of node 0, which has 1 outputs"),
    ([(0, -1)], r"inputs\[0\] uses output -1 of node 0"),
    ([(2**63 - 1, 0)], r"inputs\[0\] refers to node 9223372036854775807"),
    ([(2**63, 0)], r"field 'inputs\[0\]\[0\]' is out of range: 9223372036854775808"),
    ([(2**64 - 1, 0)], r"field 'inputs\[0\]\[0\]' is out of range: 18446744073709551615"),
    ([(0, -(2**63))], r"inputs\[0\] uses output -9223372036854775808 of node 0"),
])
def test_bad_input_references(inputs, match):
    load_error(doc([X, node("_np_exp", "e", inputs), node("_np_exp", "f", [(0, 0)])], [[1, 0]]),
               r"^\[graph_from_json\] node 1 \('e'\): " + match)


def test_huge_numbers_outside_integers():
    load_error('{"nodes": [], "heads": [[-1e400, 0]]}', r"the number -1e400 is out of range")
    load_error('{"nodes": [], "heads": [[1' + "0" * 400 + ', 0]]}', r"out of range")
    load_error(doc([X], [[0, 2**64]]), r"heads\[0\]\[1\]' must be an integer, got a number")


@pytest.mark.parametrize("heads", [[[1, 0]], [[0, 1]], [[-1, 0]]])
def test_heads_must_name_a_node_output(heads):
    load_error(doc([X], heads), r"heads\[0\] = \[.*\] does not name a node output")


def test_unknown_ops_and_arity():
    load_error(doc([X, node("no_such_op", "n", [(0, 0)])], [[1, 0]]),
               r"node 1 \('n'\): no operator named 'no_such_op' is registered")
    load_error(doc([X, node("_np_add", "a", [(0, 0)])], [[1, 0]]),
               r"node 1 \('a'\): op '_np_add' takes 2 inputs, got 1")
    load_error(doc([X, node("_np_exp", "a", [(0, 0), (0, 0)])], [[1, 0]]),
               r"node 1 \('a'\): op '_np_exp' takes 1 inputs, got 2")
    load_error(doc([node("null", "x", [(0, 0)])], [[0, 0]]),
               r"node 0 \('x'\): a variable \(op 'null'\) takes no inputs, got 1")


def test_bad_params_keep_the_ops_message_and_name_the_node():
    load_error(doc([X, node("_np_sum", "s", [(0, 0)], attrs={"axis": "banana"})], [[1, 0]]),
               r"^\[graph_from_json\] node 1 \('s'\): \[sum\] parameter 'axis' expected an int")
    load_error(doc([X, node("_np_sum", "s", [(0, 0)], attrs={"nope": "1"})], [[1, 0]]),
               r"^\[graph_from_json\] node 1 \('s'\): .*nope")
    load_error(doc([X, node("_npi_concatenate", "c", [(0, 0)])], [[1, 0]]),
               r"node 1 \('c'\): .*num_args")


def const(dtype="float32", shape="(2,)", data=(1.0, 2.0), drop=()):
    attrs = {"__const__": "1", "__dtype__": dtype, "__shape__": shape, "__data__": list(data)}
    for k in drop:
        del attrs[k]
    return doc([node("null", "c", attrs=attrs)], [[0, 0]])


def test_constants():
    assert sym.load_json(const()).eval()[0].tolist() == [1.0, 2.0]
    load_error(const(drop=["__data__"]), r"node 0 \('c'\): constant lacks field '__data__'")
    load_error(const(shape=[2]), r"node 0 \('c'\): field '__shape__' must be a string, got a list")
    load_error(const(data=[1.0]), r"node 0 \('c'\): constant has 1 values for shape \(2,\)")
    load_error(const(data=[1.0, "2"]), r"field '__data__\[1\]' must be a number, got a string")
    load_error(const(shape="(4294967296, 4294967296)", data=[]), r"array is too big")
    load_error(const(dtype="float99"), r"^\[graph_from_json\] node 0 \('c'\): .*'float99'",
               TypeError)
    with pytest.raises(ValueError):
        sym.load_json(const(shape="(2, -1)"))


def test_backward_node_with_mismatched_shapes_raises_when_run():
    g = sym.load_json(doc([node("null", "g"), node("null", "a"), node("null", "b"),
                           node("_backward_power", "bp", [(0, 0, 0), (1, 0, 0), (2, 0, 0)])],
                          [[3, 0, 0], [3, 1, 0]]))
    ok = g.eval(g=np.ones((2, 3)), a=np.ones((2, 3)), b=np.ones((3,)))
    assert [o.shape for o in ok] == [(2, 3), (3,)]
    for shapes in [((3,), (2, 3), (4,)), ((8, 8), (2,), (1,)), ((1,), (0,), (1,))]:
        with pytest.raises(ValueError, match=r"\[_backward_power\]"):
            g.eval(g=np.ones(shapes[0]), a=np.ones(shapes[1]), b=np.ones(shapes[2]))
        with pytest.raises(ValueError, match=r"\[_backward_power\]"):
            g.infer_shape(g=shapes[0], a=shapes[1], b=shapes[2])


def test_text_that_is_not_utf8_encodable():
    with pytest.raises(ValueError):  # UnicodeEncodeError: a lone surrogate
        sym.load_json('"\ud800"')
    with pytest.raises(TypeError):
        sym.load_json(b"{}")


def test_mutated_graph_json_never_crashes():
    x = sym.var("x")
    y = sym.var("y")
    text = sym.Group([sym.sum(sym.relu(x * y + 1.5), axis=1), -(x - y) ** 2]).tojson()
    rng = random.Random(5)
    vals = {"x": np.array(onp.ones((2, 3), dtype=onp.float32)),
            "y": np.array(onp.ones((3,), dtype=onp.float32))}
    pieces = ["0", "1", "-1", "7", "99999999999999999999", "1e400", '"', "[", "]", "{", "}",
              ",", ":", "null", '"_np_add"', '"_backward_power"', '"x"', "true", "0.5"]
    loaded = 0
    for _ in range(1500):
        t = list(text)
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(t))
            r = rng.random()
            if r < 0.3:
                del t[i]
            elif r < 0.6:
                t.insert(i, rng.choice(pieces))
            else:
                t[i] = rng.choice(pieces)
        try:
            g = sym.load_json("".join(t))
        except TYPED:
            continue
        loaded += 1
        args = g.list_arguments()
        try:
            g.eval(**{a: vals.get(a, vals["x"]) for a in args})
        except TYPED:
            pass
    assert loaded > 0
