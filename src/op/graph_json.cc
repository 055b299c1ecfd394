// Graph JSON, in MXNet's layout. nlohmann/json is confined to this file.
#include <cstdint>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "ndx/executor.h"

namespace ndx {

using json = nlohmann::json;

namespace {
constexpr const char* kConst = "__const__";

// "__name__": an MXNet symbol attribute rather than an op param.
bool is_symbol_attribute(const std::string& key) {
  return key.size() > 4 && key.compare(0, 2, "__") == 0 &&
         key.compare(key.size() - 2, 2, "__") == 0;
}

json constant_json(const NDArray& v) {
  json attrs;
  attrs[kConst] = "1";
  attrs["__dtype__"] = std::string(dtype_name(v.dtype()));
  attrs["__shape__"] = v.shape().str();
  attrs["__data__"] = v.to_vector<double>();
  return attrs;
}

// Errors name where in the document they are and what was expected, in our words: the JSON
// library's own messages (and its exception ids) never reach the user.
[[noreturn]] void graph_error(const std::string& where, const std::string& what) {
  value_error("[graph_from_json] ", where, ": ", what);
}

std::string kind_of(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::string:
      return "a string";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a number with a fraction or exponent";
    case json::value_t::array:
      return "a list";
    case json::value_t::object:
      return "an object";
    default:
      return "a value of another kind";
  }
}

[[noreturn]] void bad_field(const std::string& where, const std::string& field, const char* want,
                            const json& got) {
  graph_error(where, "field '" + field + "' must be " + want + ", got " + kind_of(got));
}

const std::string& string_field(const json& obj, const std::string& where, const char* field) {
  const json& v = obj[field];
  if (!v.is_string()) bad_field(where, field, "a string", v);
  return v.get_ref<const std::string&>();
}

int64_t int_value(const json& v, const std::string& where, const std::string& field) {
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      graph_error(where, "field '" + field + "' is out of range: " + v.dump());
    return static_cast<int64_t>(v.get<uint64_t>());
  }
  if (!v.is_number_integer()) bad_field(where, field, "an integer", v);
  return v.get<int64_t>();
}

// [node, output] or [node, output, version]: an entry of a node's inputs or of heads.
std::pair<int64_t, int64_t> entry_of(const json& e, const std::string& where,
                                     const std::string& field) {
  if (!e.is_array() || e.size() < 2 || e.size() > 3)
    graph_error(where, "field '" + field + "' must be [node, output] or [node, output, " +
                           "version] (integers), got " +
                           (e.is_array() ? "a list of " + std::to_string(e.size()) : kind_of(e)));
  return {int_value(e[0], where, field + "[0]"), int_value(e[1], where, field + "[1]")};
}

// Runs f; an error raised by the op or param code inside keeps its kind and message, placed
// in the document.
template <typename F>
auto at_node(const std::string& where, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    if (std::string_view(e.what()).rfind("[graph_from_json]", 0) == 0) throw;
    raise(e.kind(), "[graph_from_json] ", where, ": ", e.what());
  }
}

NDArray constant_from_json(const json& attrs, const std::string& where) {
  for (const char* key : {"__dtype__", "__shape__", "__data__"})
    if (!attrs.contains(key)) graph_error(where, std::string("constant lacks field '") + key + "'");
  const DType t = dtype_from_name(string_field(attrs, where, "__dtype__"));
  const Shape shape = FieldTraits<Shape>::from_string(string_field(attrs, where, "__shape__"),
                                                      {"graph_from_json", "__shape__"});
  const int64_t size = checked_size(shape, dtype_size(t), "graph_from_json");
  const json& data = attrs["__data__"];
  if (!data.is_array()) bad_field(where, "__data__", "a list of numbers", data);
  if (static_cast<int64_t>(data.size()) != size)
    graph_error(where,
                "constant has " + std::to_string(data.size()) + " values for shape " + shape.str());
  std::vector<double> values;
  values.reserve(data.size());
  for (size_t k = 0; k < data.size(); ++k) {
    if (!data[k].is_number())
      bad_field(where, "__data__[" + std::to_string(k) + "]", "a number", data[k]);
    values.push_back(data[k].get<double>());
  }
  return NDArray::from_vector(values, shape).astype(t);
}

// Copies and dumps of a json value recurse, so nesting is bounded before nlohmann sees the
// text: graph JSON nests 4 levels; 100,000 levels of [[[...]]] is an attack, not a graph.
// NUL bytes are refused here too.
constexpr int kMaxDepth = 128;

void check_depth(const std::string& text) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\0')  // nlohmann stops at a NUL and would ignore the rest
      value_error("[graph_from_json] invalid JSON at byte ", i, ": unexpected byte 0x00");
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth)
        value_error("[graph_from_json] invalid JSON at byte ", i, ": nested deeper than ",
                    kMaxDepth, " levels");
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

// The DOM parser, with its parse error kept (position and the text it choked on) instead of
// thrown as nlohmann's exception.
struct Parser : nlohmann::detail::json_sax_dom_parser<json> {
  explicit Parser(json& root) : json_sax_dom_parser(root, /*allow_exceptions=*/false) {}
  bool failed = false, out_of_range = false;
  size_t position = 0;
  std::string token;
  bool parse_error(size_t pos, const std::string& last_token,
                   const nlohmann::detail::exception& ex) {
    failed = true;
    out_of_range = ex.id == 406;  // a number too large for a double
    position = pos;
    token = last_token;
    return false;
  }
};

json parse_json(const std::string& text) {
  check_depth(text);
  json doc;
  Parser parser(doc);
  json::sax_parse(text, &parser);
  if (!parser.failed) return doc;
  // position counts the characters read, the offending one last.
  const size_t at = parser.position ? parser.position - 1 : 0;
  std::string reason;
  if (parser.out_of_range) {
    reason = "the number " + parser.token.substr(0, 40) + " is out of range";
  } else if (at >= text.size()) {
    reason = "unexpected end of input";
  } else {
    const auto c = static_cast<unsigned char>(text[at]);
    char hex[8];
    std::snprintf(hex, sizeof(hex), "0x%02x", c);
    reason = c >= 0x20 && c < 0x7f ? std::string("unexpected character '") + text[at] + "'"
                                   : std::string("unexpected byte ") + hex;
  }
  value_error("[graph_from_json] invalid JSON at byte ", at, ": ", reason);
}
}  // namespace

std::string graph_to_json(const Graph& g) {
  auto order = g.topo_order();
  std::unordered_map<const Node*, int> id;
  json nodes = json::array(), arg_nodes = json::array(), heads = json::array();
  for (const auto& n : order) {
    int i = static_cast<int>(nodes.size());
    id[n.get()] = i;
    json node;
    node["name"] = n->attrs.name;
    if (n->is_variable()) {
      node["op"] = "null";
      if (!n->values.empty()) {
        node["attrs"] = constant_json(n->values[0]);
      } else {
        arg_nodes.push_back(i);
        if (!n->attrs.dict.empty()) node["attrs"] = n->attrs.dict;  // (__shape__, __init__, ...)
      }
    } else {
      node["op"] = n->op()->name;
      std::map<std::string, std::string> dict = n->op()->params && n->attrs.parsed.has_value()
                                                    ? n->op()->params->to_dict(n->attrs.parsed)
                                                    : n->attrs.dict;
      node["attrs"] = dict;
    }
    json inputs = json::array();
    for (const auto& e : n->inputs) inputs.push_back({id.at(e.node.get()), e.index, 0});
    node["inputs"] = inputs;
    nodes.push_back(node);
  }
  for (const auto& o : g.outputs) heads.push_back({id.at(o.node.get()), o.index, 0});
  json doc;
  doc["nodes"] = nodes;
  doc["arg_nodes"] = arg_nodes;
  doc["heads"] = heads;
  doc["attrs"] = {{"ndx_version", "0.1.0"}};
  return doc.dump(2);
}

Graph graph_from_json(const std::string& text) {
  const json doc = parse_json(text);
  if (!doc.is_object())
    graph_error("document", "expected an object with 'nodes' and 'heads', got " + kind_of(doc));
  for (const char* field : {"nodes", "heads"}) {
    if (!doc.contains(field)) graph_error("document", std::string("no field '") + field + "'");
    if (!doc[field].is_array()) bad_field("document", field, "a list", doc[field]);
  }
  const json& jnodes = doc["nodes"];
  std::vector<NodePtr> nodes;
  nodes.reserve(jnodes.size());
  for (size_t i = 0; i < jnodes.size(); ++i) {
    const json& jn = jnodes[i];
    std::string where = "node " + std::to_string(i);
    if (!jn.is_object()) graph_error(where, "expected an object, got " + kind_of(jn));
    std::string name;
    if (jn.contains("name")) {
      name = string_field(jn, where, "name");
      where += " ('" + name + "')";
    }
    if (!jn.contains("op")) graph_error(where, "no field 'op'");
    const std::string& op = string_field(jn, where, "op");
    static const json kNoAttrs = json::object();
    const json& attrs = jn.contains("attrs") ? jn["attrs"] : kNoAttrs;
    if (!attrs.is_object()) bad_field(where, "attrs", "an object", attrs);
    NodePtr n;
    if (op == "null") {
      n = make_variable(name);
      if (attrs.contains(kConst)) {
        n->values = {at_node(where, [&] { return constant_from_json(attrs, where); })};
      } else {
        // MXNet's variable attributes (__shape__, __dtype__, __init__, __lr_mult__, ...) are
        // kept as strings: Symbol.attr reads them, infer_shape takes __shape__ as a hint.
        for (auto it = attrs.begin(); it != attrs.end(); ++it)
          if (it.value().is_string()) n->attrs.dict[it.key()] = it.value().get<std::string>();
      }
    } else {
      const Op* o = Op::find(op);
      if (!o) graph_error(where, "no operator named '" + op + "' is registered");
      std::map<std::string, std::string> dict;
      for (auto it = attrs.begin(); it != attrs.end(); ++it) {
        if (!it.value().is_string()) bad_field(where, "attrs." + it.key(), "a string", it.value());
        // MXNet's symbol attributes on ops (__profiler_scope__, __lr_mult__, __ctx_group__,
        // ...) are not params and mean nothing to ndx's ops
        if (is_symbol_attribute(it.key())) continue;
        dict[it.key()] = it.value().get<std::string>();
      }
      n = std::make_shared<Node>();
      n->attrs = at_node(where, [&] { return o->make_attrs(dict); });
      n->attrs.name = name;
    }
    if (jn.contains("inputs")) {
      const json& ins = jn["inputs"];
      if (!ins.is_array()) bad_field(where, "inputs", "a list", ins);
      if (op == "null" && !ins.empty())
        graph_error(where,
                    "a variable (op 'null') takes no inputs, got " + std::to_string(ins.size()));
      for (size_t k = 0; k < ins.size(); ++k) {
        const std::string field = "inputs[" + std::to_string(k) + "]";
        auto [src, index] = entry_of(ins[k], where, field);
        if (src < 0 || src >= static_cast<int64_t>(nodes.size()))
          graph_error(where, field + " refers to node " + std::to_string(src) +
                                 ", which is not defined before it (nodes are listed inputs " +
                                 "first, so a graph has no cycles)");
        if (index < 0 || index >= nodes[src]->num_outputs())
          graph_error(where, field + " uses output " + std::to_string(index) + " of node " +
                                 std::to_string(src) + ", which has " +
                                 std::to_string(nodes[src]->num_outputs()) + " outputs");
        n->inputs.push_back(NodeEntry{nodes[src], static_cast<uint32_t>(index), 0});
      }
    }
    if (!n->is_variable() && n->inputs.size() != n->op()->inputs_for(n->attrs))
      graph_error(where, "op '" + op + "' takes " + std::to_string(n->op()->inputs_for(n->attrs)) +
                             " inputs, got " + std::to_string(n->inputs.size()));
    nodes.push_back(std::move(n));
  }
  Graph g;
  const json& heads = doc["heads"];
  for (size_t k = 0; k < heads.size(); ++k) {
    const std::string field = "heads[" + std::to_string(k) + "]";
    auto [src, index] = entry_of(heads[k], "document", field);
    if (src < 0 || src >= static_cast<int64_t>(nodes.size()) || index < 0 ||
        index >= nodes[src]->num_outputs())
      graph_error("document", field + " = [" + std::to_string(src) + ", " + std::to_string(index) +
                                  "] does not name a node output");
    g.outputs.push_back(NodeEntry{nodes[src], static_cast<uint32_t>(index), 0});
  }
  return g;
}

}  // namespace ndx
