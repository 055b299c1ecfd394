// Bounding-box ops of MXNet's npx (its contrib ops): box_nms, non-maximum suppression of rows
// [id, score, x1, y1, x2, y2, ...] with a gradient that follows each kept box back to its row,
// bipartite_matching, the greedy one-to-one matching of a score matrix, roi_align, roi_pooling,
// SSD's multibox_prior / multibox_target / multibox_detection, and box_encode / box_decode.
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "kernel/parallel.h"
#include "ndx/graph.h"
#include "operator/kernel_util.h"
#include "operator/nn_check.h"

namespace ndx {
namespace {

using kernel::as_array;
using kernel::write_req;

using nn_check::require_float;

// The batch count, rows and row width of a (..., n, k) array.
struct Rows {
  int64_t batches, n, k;
};

Rows rows_of(const Shape& s) {
  const int nd = s.ndim();
  int64_t b = 1;
  for (int d = 0; d < nd - 2; ++d) b *= s[d];
  return {b, s[nd - 2], s[nd - 1]};
}

// ============================== box_nms ==============================
struct BoxNmsParam {
  double overlap_thresh = 0.5;
  double valid_thresh = 0;
  int64_t topk = -1;
  int64_t coord_start = 2;
  int64_t score_index = 1;
  int64_t id_index = -1;
  int64_t background_id = -1;
  bool force_suppress = false;
  std::string in_format = "corner";
  std::string out_format = "corner";
  static void declare(ParamDecl<BoxNmsParam>& d) {
    d.field("overlap_thresh", &BoxNmsParam::overlap_thresh)
        .set_default(0.5)
        .describe("A box whose IoU with a kept box of higher score exceeds this is removed.");
    d.field("valid_thresh", &BoxNmsParam::valid_thresh)
        .set_default(0.0)
        .describe("Only boxes whose score is greater than this take part.");
    d.field("topk", &BoxNmsParam::topk)
        .set_default(int64_t{-1})
        .describe(
            "Only the topk boxes of highest score take part (-1: all; 0: the input "
            "comes back unchanged, as in MXNet).");
    d.field("coord_start", &BoxNmsParam::coord_start)
        .set_default(int64_t{2})
        .describe("Index of the first of the 4 coordinates in a row.");
    d.field("score_index", &BoxNmsParam::score_index)
        .set_default(int64_t{1})
        .describe("Index of the score in a row.");
    d.field("id_index", &BoxNmsParam::id_index)
        .set_default(int64_t{-1})
        .describe("Index of the class id in a row (-1: none; then every box competes).");
    d.field("background_id", &BoxNmsParam::background_id)
        .set_default(int64_t{-1})
        .describe("With id_index, boxes of this class id are removed before suppression.");
    d.field("force_suppress", &BoxNmsParam::force_suppress)
        .set_default(false)
        .describe("Suppress across class ids too (without it, only boxes of one id compete).");
    d.field("in_format", &BoxNmsParam::in_format)
        .set_default(std::string("corner"))
        .set_enum({"corner", "center"})
        .describe("corner: [xmin, ymin, xmax, ymax]; center: [x, y, width, height].");
    d.field("out_format", &BoxNmsParam::out_format)
        .set_default(std::string("corner"))
        .set_enum({"corner", "center"})
        .describe("The coordinates' format in the output.");
  }
};

void check_box_layout(const BoxNmsParam& p, int64_t k) {
  auto in_row = [k](int64_t i) { return i >= 0 && i < k; };
  auto on_coords = [&p](int64_t i) { return i >= p.coord_start && i < p.coord_start + 4; };
  if (!in_row(p.coord_start) || !in_row(p.coord_start + 3))
    value_error("[box_nms] coordinates ", p.coord_start, "..", p.coord_start + 3,
                " do not fit in rows of ", k, " values");
  if (!in_row(p.score_index) || on_coords(p.score_index))
    value_error("[box_nms] score_index ", p.score_index, " must be in [0, ", k,
                ") and not one of the coordinates");
  if (p.id_index >= 0 &&
      (!in_row(p.id_index) || on_coords(p.id_index) || p.id_index == p.score_index))
    value_error("[box_nms] id_index ", p.id_index, " must be in [0, ", k,
                ") and not the score or a coordinate");
}

bool BoxNmsShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known()) return false;
  const Shape& s = (*in)[0];
  if (s.ndim() < 2) value_error("[box_nms] data must be (..., boxes, width), got shape ", s.str());
  check_box_layout(attrs.get<BoxNmsParam>(), s[s.ndim() - 1]);
  Shape record = s;
  record[s.ndim() - 1] = 1;
  assign_shape(attrs, &(*out)[0], s, "output", 0);
  assign_shape(attrs, &(*out)[1], record, "output", 1);
  return true;
}

bool BoxNmsType(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown) return false;
  require_float(attrs, (*in)[0], "data");
  assign_type(attrs, &(*out)[0], (*in)[0], "output", 0);
  assign_type(attrs, &(*out)[1], DType::kInt64, "output", 1);
  return true;
}

// One axis's overlap of two boxes: a and b point at that axis's first coordinate; the second
// is two places on (xmax, or the width in center format).
template <class F>
F overlap(const F* a, const F* b, bool center) {
  F lo, hi;
  if (center) {
    lo = std::max(a[0] - a[2] / 2, b[0] - b[2] / 2);
    hi = std::min(a[0] + a[2] / 2, b[0] + b[2] / 2);
  } else {
    lo = std::max(a[0], b[0]);
    hi = std::min(a[2], b[2]);
  }
  return hi > lo ? hi - lo : F(0);
}

template <class F>
F area(const F* a, bool center) {
  const F w = center ? a[2] : a[2] - a[0], h = center ? a[3] : a[3] - a[1];
  return w < 0 || h < 0 ? F(0) : w * h;
}

template <class F>
F iou(const F* a, const F* b, bool center) {
  const F inter = overlap(a, b, center) * overlap(a + 1, b + 1, center);
  return inter / (area(a, center) + area(b, center) - inter);
}

// The rows one batch keeps, in output order (score descending, ties in input order).
template <class F>
std::vector<int64_t> nms_keep(const F* x, int64_t n, int64_t k, const BoxNmsParam& p) {
  std::vector<int64_t> order;
  for (int64_t i = 0; i < n; ++i) {
    const F* row = x + i * k;
    if (!(row[p.score_index] > static_cast<F>(p.valid_thresh))) continue;
    if (p.id_index >= 0 && row[p.id_index] == static_cast<F>(p.background_id)) continue;
    order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return x[a * k + p.score_index] > x[b * k + p.score_index];
  });
  if (p.topk >= 0 && static_cast<int64_t>(order.size()) > p.topk)
    order.resize(static_cast<size_t>(p.topk));
  const bool center = p.in_format == "center";
  const bool by_class = !p.force_suppress && p.id_index >= 0;
  std::vector<char> alive(order.size(), 1);
  std::vector<int64_t> keep;
  for (size_t r = 0; r < order.size(); ++r) {
    if (!alive[r]) continue;
    const F* ref = x + order[r] * k;
    keep.push_back(order[r]);
    for (size_t q = r + 1; q < order.size(); ++q) {
      if (!alive[q]) continue;
      const F* other = x + order[q] * k;
      if (by_class && ref[p.id_index] != other[p.id_index]) continue;
      if (iou(ref + p.coord_start, other + p.coord_start, center) >
          static_cast<F>(p.overlap_thresh))
        alive[q] = 0;
    }
  }
  return keep;
}

// Coordinates at c converted between corner and center format.
template <class F>
void convert_box(F* c, bool to_center) {
  if (to_center) {
    const F w = c[2] - c[0], h = c[3] - c[1];
    c[0] += w / 2, c[1] += h / 2, c[2] = w, c[3] = h;
  } else {
    const F hw = c[2] / 2, hh = c[3] / 2;
    c[2] = c[0] + hw, c[3] = c[1] + hh, c[0] -= hw, c[1] -= hh;
  }
}

template <class F>
void box_nms_batches(const F* x, F* o, int64_t* record, const Rows& g, const BoxNmsParam& p,
                     int64_t b0, int64_t b1) {
  const bool convert = p.in_format != p.out_format;
  for (int64_t b = b0; b < b1; ++b) {
    const F* xb = x + b * g.n * g.k;
    F* ob = o + b * g.n * g.k;
    int64_t* rb = record + b * g.n;
    if (p.topk == 0) {  // MXNet's topk = 0: the input unchanged, every row its own source
      std::copy(xb, xb + g.n * g.k, ob);
      std::iota(rb, rb + g.n, int64_t{0});
      continue;
    }
    const std::vector<int64_t> keep = nms_keep(xb, g.n, g.k, p);
    std::fill(ob, ob + g.n * g.k, F(-1));
    std::fill(rb, rb + g.n, int64_t{-1});
    for (size_t j = 0; j < keep.size(); ++j) {
      std::copy(xb + keep[j] * g.k, xb + (keep[j] + 1) * g.k, ob + static_cast<int64_t>(j) * g.k);
      rb[j] = keep[j];
      if (convert)
        convert_box(ob + static_cast<int64_t>(j) * g.k + p.coord_start, p.out_format == "center");
    }
  }
}

void BoxNmsCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<BoxNmsParam>();
  const Rows g = rows_of(in[0].shape);
  if (in[0].size() == 0) return;
  const DType ct = in[0].dtype == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  std::vector<NDArray> keep_alive;
  const TBlob x = kernel::cast_blob(in[0], ct, &keep_alive);
  NDArray result(in[0].shape, ct, cpu()), record(out[1].shape, DType::kInt64, cpu());
  auto* rec = static_cast<int64_t*>(record.raw_data());
  kernel::parallel_for(g.batches, 1, [&](int64_t b0, int64_t b1) {
    if (ct == DType::kFloat64)
      box_nms_batches(static_cast<const double*>(x.dptr), static_cast<double*>(result.raw_data()),
                      rec, g, p, b0, b1);
    else
      box_nms_batches(static_cast<const float*>(x.dptr), static_cast<float*>(result.raw_data()),
                      rec, g, p, b0, b1);
  });
  if (req[0] != kNullOp) write_req(result, as_array(out[0]), req[0]);
  if (req[1] != kNullOp) write_req(record, as_array(out[1]), req[1]);
}

// _backward_npx_box_nms: (ograd, record) -> each kept row's gradient back at the row it came
// from, zeros elsewhere (MXNet's rule: the gradient sticks to its box).
bool BoxNmsBackwardShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known() || !(*in)[1].is_known()) return false;
  const Shape& g = (*in)[0];
  if (g.ndim() < 2)
    value_error("[backward_box_nms] ograd must be (..., boxes, width), got shape ", g.str());
  Shape record = g;
  record[g.ndim() - 1] = 1;
  if ((*in)[1] != record)
    value_error("[backward_box_nms] source_row must have shape ", record.str(), ", got ",
                (*in)[1].str());
  assign_shape(attrs, &(*out)[0], (*in)[0], "output", 0);
  return true;
}

bool BoxNmsBackwardType(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown) return false;
  require_float(attrs, (*in)[0], "ograd");
  assign_type(attrs, &(*out)[0], (*in)[0], "output", 0);
  return true;
}

void BoxNmsBackwardCompute(const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                           const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp || out[0].size() == 0) return;
  const Rows g = rows_of(in[0].shape);
  const DType ct = in[0].dtype == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  std::vector<NDArray> keep;
  const TBlob og = kernel::cast_blob(in[0], ct, &keep);
  const TBlob rec = kernel::cast_blob(in[1], DType::kInt64, &keep);
  NDArray grad(out[0].shape, ct, cpu());
  const size_t bytes = static_cast<size_t>(dtype_size(ct) * g.k);
  const auto* src = static_cast<const char*>(og.dptr);
  auto* dst = static_cast<char*>(grad.raw_data());
  std::fill(dst, dst + bytes * static_cast<size_t>(g.batches * g.n), char{0});
  const auto* r = static_cast<const int64_t*>(rec.dptr);
  for (int64_t b = 0; b < g.batches; ++b)
    for (int64_t i = 0; i < g.n; ++i) {
      const int64_t from = r[b * g.n + i];
      if (from < 0 || from >= g.n) continue;
      std::copy(src + (b * g.n + i) * bytes, src + (b * g.n + i + 1) * bytes,
                dst + (b * g.n + from) * bytes);
    }
  write_req(grad, as_array(out[0]), req[0]);
}

// ============================== bipartite_matching ==============================
struct BipartiteMatchingParam {
  bool is_ascend = false;
  double threshold = 0;
  int64_t topk = -1;
  static void declare(ParamDecl<BipartiteMatchingParam>& d) {
    d.field("is_ascend", &BipartiteMatchingParam::is_ascend)
        .set_default(false)
        .describe("Match the lowest scores first (then scores must be below threshold).");
    d.field("threshold", &BipartiteMatchingParam::threshold)
        .describe(
            "Pairs whose score is not above it (not below it with is_ascend) stay "
            "unmatched.");
    d.field("topk", &BipartiteMatchingParam::topk)
        .set_default(int64_t{-1})
        .describe("At most this many matches per batch (-1: no limit).");
  }
};

bool MatchingShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known()) return false;
  const Shape& s = (*in)[0];
  if (s.ndim() < 2)
    value_error("[bipartite_matching] data must be (..., rows, columns), got shape ", s.str());
  Shape rows = Shape::filled(s.ndim() - 1, 0), cols = Shape::filled(s.ndim() - 1, 0);
  for (int d = 0; d < s.ndim() - 2; ++d) rows[d] = cols[d] = s[d];
  rows[s.ndim() - 2] = s[s.ndim() - 2];
  cols[s.ndim() - 2] = s[s.ndim() - 1];
  assign_shape(attrs, &(*out)[0], rows, "output", 0);
  assign_shape(attrs, &(*out)[1], cols, "output", 1);
  return true;
}

bool MatchingType(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown) return false;
  require_float(attrs, (*in)[0], "data");
  assign_type(attrs, &(*out)[0], (*in)[0], "output", 0);
  assign_type(attrs, &(*out)[1], (*in)[0], "output", 1);
  return true;
}

// Greedy matching of one n x m score matrix: pairs in score order (ties in row-major order),
// each taken when its row and column are both free, until a score fails the threshold or
// topk pairs are matched.
void match_one(const double* s, int64_t n, int64_t m, const BipartiteMatchingParam& p,
               double* row_match, double* col_match) {
  std::vector<int64_t> order(static_cast<size_t>(n * m));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return p.is_ascend ? s[a] < s[b] : s[a] > s[b]; });
  std::fill(row_match, row_match + n, -1.0);
  std::fill(col_match, col_match + m, -1.0);
  int64_t matched = 0;
  for (const int64_t idx : order) {
    if (p.topk >= 0 && matched >= p.topk) break;
    const int64_t r = idx / m, c = idx % m;
    if (row_match[r] >= 0 || col_match[c] >= 0) continue;
    if (p.is_ascend ? !(s[idx] < p.threshold) : !(s[idx] > p.threshold)) break;
    row_match[r] = static_cast<double>(c);
    col_match[c] = static_cast<double>(r);
    ++matched;
  }
}

void MatchingCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<BipartiteMatchingParam>();
  const Rows g = rows_of(in[0].shape);
  std::vector<NDArray> keep;
  const TBlob s = kernel::cast_blob(in[0], DType::kFloat64, &keep);
  NDArray rows(out[0].shape, DType::kFloat64, cpu()), cols(out[1].shape, DType::kFloat64, cpu());
  auto* rm = static_cast<double*>(rows.raw_data());
  auto* cm = static_cast<double*>(cols.raw_data());
  const auto* sp = static_cast<const double*>(s.dptr);
  kernel::parallel_for(g.batches, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      match_one(sp + b * g.n * g.k, g.n, g.k, p, rm + b * g.n, cm + b * g.k);
  });
  if (req[0] != kNullOp) write_req(rows, as_array(out[0]), req[0]);
  if (req[1] != kNullOp) write_req(cols, as_array(out[1]), req[1]);
}

// ============================== roi_align ==============================
// Mask R-CNN's RoIAlign as MXNet's ROIAlign computes it: each region's bins average
// bilinear samples of the feature map taken on a regular grid inside the bin.
struct RoiAlignParam {
  Shape pooled_size;
  double spatial_scale = 1;
  int64_t sample_ratio = -1;
  bool position_sensitive = false;
  bool aligned = false;
  static void declare(ParamDecl<RoiAlignParam>& d) {
    d.field("pooled_size", &RoiAlignParam::pooled_size)
        .describe("(height, width) of each region's output.");
    d.field("spatial_scale", &RoiAlignParam::spatial_scale)
        .describe("Factor from the rois' coordinates to the feature map's (1 / stride).");
    d.field("sample_ratio", &RoiAlignParam::sample_ratio)
        .set_default(int64_t{-1})
        .describe("Samples per bin along each axis (<= 0: ceil(region size / pooled size)).");
    d.field("position_sensitive", &RoiAlignParam::position_sensitive)
        .set_default(false)
        .describe("Each bin reads its own group of channels (R-FCN): C / (ph * pw) out.");
    d.field("aligned", &RoiAlignParam::aligned)
        .set_default(false)
        .describe("Shift coordinates by half a pixel (Detectron2's aligned RoIAlign).");
  }
};

struct RoiGeometry {
  int64_t n, c, h, w, rois, ph, pw, out_c;
};

RoiGeometry roi_geometry(const RoiAlignParam& p, const Shape& data, const Shape& rois) {
  if (data.ndim() != 4)
    value_error("[roi_align] data must be (N, C, H, W), got shape ", data.str());
  if (rois.ndim() != 2 || rois[1] != 5)
    value_error("[roi_align] rois must be (R, 5) rows [batch, x1, y1, x2, y2], got shape ",
                rois.str());
  if (p.pooled_size.ndim() != 2 || p.pooled_size[0] <= 0 || p.pooled_size[1] <= 0 ||
      p.pooled_size[0] > (1 << 20) || p.pooled_size[1] > (1 << 20))
    value_error("[roi_align] pooled_size must be (height, width) of positive lengths, got ",
                p.pooled_size.str());
  if (!(p.spatial_scale > 0) || !std::isfinite(p.spatial_scale))
    value_error("[roi_align] spatial_scale must be a positive number, got ", p.spatial_scale);
  if (p.sample_ratio > 1024)
    value_error("[roi_align] sample_ratio must be at most 1024, got ", p.sample_ratio);
  RoiGeometry g{data[0], data[1],          data[2],          data[3],
                rois[0], p.pooled_size[0], p.pooled_size[1], data[1]};
  if (p.position_sensitive) {
    if (g.c % (g.ph * g.pw) != 0)
      value_error("[roi_align] position_sensitive needs channels divisible by ph * pw = ",
                  g.ph * g.pw, ", got ", g.c);
    g.out_c = g.c / (g.ph * g.pw);
  }
  return g;
}

bool RoiAlignShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known() || !(*in)[1].is_known()) return false;
  const RoiGeometry g = roi_geometry(attrs.get<RoiAlignParam>(), (*in)[0], (*in)[1]);
  const Shape o{g.rois, g.out_c, g.ph, g.pw};
  checked_size(o, 8, "roi_align");
  assign_shape(attrs, &(*out)[0], o, "output", 0);
  return true;
}

// Every input a float dtype (not necessarily one dtype: MXNet's kernels cast); every output
// takes input 0's.
bool float_inputs_type(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out,
                       const std::vector<const char*>& names) {
  for (const DType t : *in)
    if (t == DType::kUnknown) return false;
  for (size_t i = 0; i < in->size(); ++i) require_float(attrs, (*in)[i], names[i]);
  for (size_t j = 0; j < out->size(); ++j)
    assign_type(attrs, &(*out)[j], (*in)[0], "output", static_cast<int>(j));
  return true;
}

bool RoiAlignType(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  return float_inputs_type(attrs, in, out, {"data", "rois"});
}

// A region's sampling grid: where bin (i, j)'s samples start and how far apart they are.
struct RoiWindow {
  int64_t batch;  // -1: a padding row (output 0)
  double y0, x0, bin_h, bin_w;
  int64_t grid_h, grid_w;
};

RoiWindow roi_window(const double* r, const RoiAlignParam& p, const RoiGeometry& g) {
  const double offset = p.aligned ? 0.5 : 0.0;
  RoiWindow win{};
  if (!(r[0] >= 0 && r[0] < static_cast<double>(g.n))) {
    win.batch = -1;
    return win;
  }
  win.batch = static_cast<int64_t>(r[0]);
  const double x1 = r[1] * p.spatial_scale - offset, y1 = r[2] * p.spatial_scale - offset;
  double rw = r[3] * p.spatial_scale - offset - x1, rh = r[4] * p.spatial_scale - offset - y1;
  if (!p.aligned) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
  win.y0 = y1, win.x0 = x1;
  win.bin_h = rh / static_cast<double>(g.ph), win.bin_w = rw / static_cast<double>(g.pw);
  auto grid = [&](double extent, int64_t pooled) {
    if (p.sample_ratio > 0) return p.sample_ratio;
    const double c = std::ceil(extent / static_cast<double>(pooled));
    return std::isfinite(c) ? std::clamp<int64_t>(static_cast<int64_t>(c), 1, 1024) : int64_t{1};
  };
  win.grid_h = grid(rh, g.ph), win.grid_w = grid(rw, g.pw);
  return win;
}

// The four neighbours of (y, x) and their weights, Detectron's way: outside [-1, size] the
// sample is 0 (all weights 0); otherwise clamped into the map.
struct Taps {
  int64_t y0, y1, x0, x1;
  double w00, w01, w10, w11;
};

Taps bilinear_taps(double y, double x, int64_t h, int64_t w) {
  Taps t{0, 0, 0, 0, 0, 0, 0, 0};
  if (!(y >= -1.0 && y <= static_cast<double>(h) && x >= -1.0 && x <= static_cast<double>(w)))
    return t;
  y = std::max(y, 0.0), x = std::max(x, 0.0);
  t.y0 = static_cast<int64_t>(y), t.x0 = static_cast<int64_t>(x);
  if (t.y0 >= h - 1)
    t.y0 = t.y1 = h - 1, y = static_cast<double>(t.y0);
  else
    t.y1 = t.y0 + 1;
  if (t.x0 >= w - 1)
    t.x0 = t.x1 = w - 1, x = static_cast<double>(t.x0);
  else
    t.x1 = t.x0 + 1;
  const double ly = y - static_cast<double>(t.y0), lx = x - static_cast<double>(t.x0);
  t.w00 = (1 - ly) * (1 - lx), t.w01 = (1 - ly) * lx, t.w10 = ly * (1 - lx), t.w11 = ly * lx;
  return t;
}

// Calls visit(taps, weight) for every sample of bin (i, j) of a region; weight is 1 / count.
template <class Visit>
void for_each_sample(const RoiWindow& win, const RoiGeometry& g, int64_t i, int64_t j,
                     Visit visit) {
  const double share = 1.0 / static_cast<double>(std::max<int64_t>(win.grid_h * win.grid_w, 1));
  for (int64_t iy = 0; iy < win.grid_h; ++iy) {
    const double y = win.y0 + static_cast<double>(i) * win.bin_h +
                     (static_cast<double>(iy) + 0.5) * win.bin_h / static_cast<double>(win.grid_h);
    for (int64_t ix = 0; ix < win.grid_w; ++ix) {
      const double x =
          win.x0 + static_cast<double>(j) * win.bin_w +
          (static_cast<double>(ix) + 0.5) * win.bin_w / static_cast<double>(win.grid_w);
      visit(bilinear_taps(y, x, g.h, g.w), share);
    }
  }
}

// The input channel that output channel oc's bin (i, j) reads.
int64_t source_channel(const RoiAlignParam& p, const RoiGeometry& g, int64_t oc, int64_t i,
                       int64_t j) {
  return p.position_sensitive ? (oc * g.ph + i) * g.pw + j : oc;
}

std::vector<RoiWindow> roi_windows(const TBlob& rois, const RoiAlignParam& p, const RoiGeometry& g,
                                   std::vector<NDArray>* keep) {
  const TBlob r = kernel::cast_blob(rois, DType::kFloat64, keep);
  std::vector<RoiWindow> out;
  for (int64_t k = 0; k < g.rois; ++k)
    out.push_back(roi_window(static_cast<const double*>(r.dptr) + 5 * k, p, g));
  return out;
}

void RoiAlignCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp || out[0].size() == 0) return;
  const auto& p = attrs.get<RoiAlignParam>();
  const RoiGeometry g = roi_geometry(p, in[0].shape, in[1].shape);
  std::vector<NDArray> keep;
  const std::vector<RoiWindow> wins = roi_windows(in[1], p, g, &keep);
  const TBlob x = kernel::cast_blob(in[0], DType::kFloat64, &keep);
  const auto* xd = static_cast<const double*>(x.dptr);
  NDArray result(out[0].shape, DType::kFloat64, cpu());
  auto* o = static_cast<double*>(result.raw_data());
  const int64_t planes = g.rois * g.out_c;
  kernel::parallel_for(planes, 1, [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const RoiWindow& win = wins[static_cast<size_t>(q / g.out_c)];
      const int64_t oc = q % g.out_c;
      for (int64_t i = 0; i < g.ph; ++i)
        for (int64_t j = 0; j < g.pw; ++j) {
          double acc = 0;
          if (win.batch >= 0) {
            const double* plane =
                xd + (win.batch * g.c + source_channel(p, g, oc, i, j)) * g.h * g.w;
            for_each_sample(win, g, i, j, [&](const Taps& t, double share) {
              acc += share * (t.w00 * plane[t.y0 * g.w + t.x0] + t.w01 * plane[t.y0 * g.w + t.x1] +
                              t.w10 * plane[t.y1 * g.w + t.x0] + t.w11 * plane[t.y1 * g.w + t.x1]);
            });
          }
          o[(q * g.ph + i) * g.pw + j] = acc;
        }
    }
  });
  write_req(result, as_array(out[0]), req[0]);
}

// _backward_npx_roi_align: (ograd, data, rois) -> (each sample's weights times its bin's
// gradient added into the data, zeros for the rois). Threads own input channels, so no two
// add into one element.
bool RoiAlignBackwardShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[1].is_known() || !(*in)[2].is_known()) return false;
  const RoiGeometry g = roi_geometry(attrs.get<RoiAlignParam>(), (*in)[1], (*in)[2]);
  const Shape expect{g.rois, g.out_c, g.ph, g.pw};
  if ((*in)[0].is_known() && (*in)[0] != expect)
    value_error("[backward_roi_align] ograd must have shape ", expect.str(), ", got ",
                (*in)[0].str());
  assign_shape(attrs, &(*out)[0], (*in)[1], "output", 0);
  assign_shape(attrs, &(*out)[1], (*in)[2], "output", 1);
  return true;
}

bool RoiAlignBackwardType(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[1] == DType::kUnknown || (*in)[2] == DType::kUnknown) return false;
  require_float(attrs, (*in)[1], "data");
  assign_type(attrs, &(*out)[0], (*in)[1], "output", 0);
  assign_type(attrs, &(*out)[1], (*in)[2], "output", 1);
  return true;
}

void RoiAlignBackwardCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                             const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<RoiAlignParam>();
  const RoiGeometry g = roi_geometry(p, in[1].shape, in[2].shape);
  if (req[1] != kNullOp) kernel::fill_output(out[1], req[1], 0.0);
  if (req[0] == kNullOp || out[0].size() == 0) return;
  std::vector<NDArray> keep;
  const std::vector<RoiWindow> wins = roi_windows(in[2], p, g, &keep);
  const TBlob og = kernel::cast_blob(in[0], DType::kFloat64, &keep);
  const auto* ogd = static_cast<const double*>(og.dptr);
  NDArray grad(out[0].shape, DType::kFloat64, cpu());
  auto* gd = static_cast<double*>(grad.raw_data());
  std::fill(gd, gd + grad.size(), 0.0);
  kernel::parallel_for(g.c, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t k = 0; k < g.rois; ++k) {
      const RoiWindow& win = wins[static_cast<size_t>(k)];
      if (win.batch < 0) continue;
      for (int64_t oc = 0; oc < g.out_c; ++oc)
        for (int64_t i = 0; i < g.ph; ++i)
          for (int64_t j = 0; j < g.pw; ++j) {
            const int64_t ic = source_channel(p, g, oc, i, j);
            if (ic < c0 || ic >= c1) continue;
            const double top = ogd[((k * g.out_c + oc) * g.ph + i) * g.pw + j];
            double* plane = gd + (win.batch * g.c + ic) * g.h * g.w;
            for_each_sample(win, g, i, j, [&](const Taps& t, double share) {
              const double v = top * share;
              plane[t.y0 * g.w + t.x0] += v * t.w00;
              plane[t.y0 * g.w + t.x1] += v * t.w01;
              plane[t.y1 * g.w + t.x0] += v * t.w10;
              plane[t.y1 * g.w + t.x1] += v * t.w11;
            });
          }
    }
  });
  write_req(grad, as_array(out[0]), req[0]);
}

// ============================== roi_pooling ==============================
// Fast R-CNN's RoIPooling (MXNet's ROIPooling): each region, its corners rounded to the
// feature grid, is cut into pooled_size bins whose maxima form the output; the hidden output
// keeps each maximum's flat index in its (H, W) plane for the gradient (-1: an empty bin).
struct RoiPoolingParam {
  Shape pooled_size;
  double spatial_scale = 1;
  static void declare(ParamDecl<RoiPoolingParam>& d) {
    d.field("pooled_size", &RoiPoolingParam::pooled_size)
        .describe("(height, width) of each region's output.");
    d.field("spatial_scale", &RoiPoolingParam::spatial_scale)
        .describe("Factor from the rois' coordinates to the feature map's (1 / stride).");
  }
};

RoiGeometry pooling_geometry(const RoiPoolingParam& p, const Shape& data, const Shape& rois) {
  RoiAlignParam a;
  a.pooled_size = p.pooled_size, a.spatial_scale = p.spatial_scale;
  return roi_geometry(a, data, rois);
}

bool RoiPoolingShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known() || !(*in)[1].is_known()) return false;
  const RoiGeometry g = pooling_geometry(attrs.get<RoiPoolingParam>(), (*in)[0], (*in)[1]);
  const Shape o{g.rois, g.c, g.ph, g.pw};
  checked_size(o, 8, "roi_pooling");
  assign_shape(attrs, &(*out)[0], o, "output", 0);
  assign_shape(attrs, &(*out)[1], o, "output", 1);
  return true;
}

bool RoiPoolingType(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  if ((*in)[0] == DType::kUnknown || (*in)[1] == DType::kUnknown) return false;
  require_float(attrs, (*in)[0], "data");
  require_float(attrs, (*in)[1], "rois");
  assign_type(attrs, &(*out)[0], (*in)[0], "output", 0);
  assign_type(attrs, &(*out)[1], DType::kInt64, "output", 1);
  return true;
}

// [start, end) of bin i of n over a region [origin, origin + extent) of an axis of `size`.
std::pair<int64_t, int64_t> pool_bin(int64_t i, int64_t n, int64_t origin, int64_t extent,
                                     int64_t size) {
  const double bin = static_cast<double>(extent) / static_cast<double>(n);
  auto at = [&](double v) {
    return std::clamp<int64_t>(static_cast<int64_t>(v) + origin, 0, size);
  };
  return {at(std::floor(static_cast<double>(i) * bin)),
          at(std::ceil(static_cast<double>(i + 1) * bin))};
}

// A region's corners on the feature grid (rounded half away from zero, as C's round), or
// nullopt for a padding row.
struct PoolRegion {
  int64_t batch, x0, y0, w, h;
};

PoolRegion pool_region(const double* r, double scale, const RoiGeometry& g) {
  if (!(r[0] >= 0 && r[0] < static_cast<double>(g.n))) return {-1, 0, 0, 0, 0};
  auto grid = [&](double v) {
    const double s = std::round(v * scale);
    return static_cast<int64_t>(std::clamp(s, -1e15, 1e15));
  };
  const int64_t x0 = grid(r[1]), y0 = grid(r[2]), x1 = grid(r[3]), y1 = grid(r[4]);
  return {static_cast<int64_t>(r[0]), x0, y0, std::max<int64_t>(x1 - x0 + 1, 1),
          std::max<int64_t>(y1 - y0 + 1, 1)};
}

void RoiPoolingCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                       const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<RoiPoolingParam>();
  const RoiGeometry g = pooling_geometry(p, in[0].shape, in[1].shape);
  if (out[0].size() == 0) return;
  std::vector<NDArray> keep;
  const TBlob x = kernel::cast_blob(in[0], DType::kFloat64, &keep);
  const TBlob r = kernel::cast_blob(in[1], DType::kFloat64, &keep);
  const auto* xd = static_cast<const double*>(x.dptr);
  NDArray result(out[0].shape, DType::kFloat64, cpu()), index(out[1].shape, DType::kInt64, cpu());
  auto* o = static_cast<double*>(result.raw_data());
  auto* oi = static_cast<int64_t*>(index.raw_data());
  kernel::parallel_for(g.rois * g.c, 1, [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t k = q / g.c, ch = q % g.c;
      const PoolRegion reg =
          pool_region(static_cast<const double*>(r.dptr) + 5 * k, p.spatial_scale, g);
      for (int64_t i = 0; i < g.ph; ++i)
        for (int64_t j = 0; j < g.pw; ++j) {
          double best = 0;
          int64_t at = -1;
          if (reg.batch >= 0) {
            const auto [h0, h1] = pool_bin(i, g.ph, reg.y0, reg.h, g.h);
            const auto [w0, w1] = pool_bin(j, g.pw, reg.x0, reg.w, g.w);
            const double* plane = xd + (reg.batch * g.c + ch) * g.h * g.w;
            for (int64_t y = h0; y < h1; ++y)
              for (int64_t xx = w0; xx < w1; ++xx)
                if (at < 0 || plane[y * g.w + xx] > best)
                  best = plane[y * g.w + xx], at = y * g.w + xx;
            if (at < 0) best = 0;
          }
          o[(q * g.ph + i) * g.pw + j] = best;
          oi[(q * g.ph + i) * g.pw + j] = at;
        }
    }
  });
  if (req[0] != kNullOp) write_req(result, as_array(out[0]), req[0]);
  if (req[1] != kNullOp) write_req(index, as_array(out[1]), req[1]);
}

// _backward_npx_roi_pooling: (ograd, index, data, rois) -> (each bin's gradient added at its
// maximum, zeros for the rois). Threads own channels.
bool RoiPoolingBackwardShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  for (const auto& s : *in)
    if (!s.is_known()) return false;
  const RoiGeometry g = pooling_geometry(attrs.get<RoiPoolingParam>(), (*in)[2], (*in)[3]);
  const Shape expect{g.rois, g.c, g.ph, g.pw};
  if ((*in)[0] != expect || (*in)[1] != expect)
    value_error("[backward_roi_pooling] ograd and index must have shape ", expect.str(), ", got ",
                (*in)[0].str(), " and ", (*in)[1].str());
  assign_shape(attrs, &(*out)[0], (*in)[2], "output", 0);
  assign_shape(attrs, &(*out)[1], (*in)[3], "output", 1);
  return true;
}

bool RoiPoolingBackwardType(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  for (const DType t : *in)
    if (t == DType::kUnknown) return false;
  require_float(attrs, (*in)[2], "data");
  assign_type(attrs, &(*out)[0], (*in)[2], "output", 0);
  assign_type(attrs, &(*out)[1], (*in)[3], "output", 1);
  return true;
}

void RoiPoolingBackwardCompute(const NodeAttrs& attrs, const OpContext&,
                               const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                               const std::vector<TBlob>& out) {
  const auto& p = attrs.get<RoiPoolingParam>();
  const RoiGeometry g = pooling_geometry(p, in[2].shape, in[3].shape);
  if (req[1] != kNullOp) kernel::fill_output(out[1], req[1], 0.0);
  if (req[0] == kNullOp || out[0].size() == 0) return;
  std::vector<NDArray> keep;
  const TBlob og = kernel::cast_blob(in[0], DType::kFloat64, &keep);
  const TBlob idx = kernel::cast_blob(in[1], DType::kInt64, &keep);
  const TBlob r = kernel::cast_blob(in[3], DType::kFloat64, &keep);
  NDArray grad(out[0].shape, DType::kFloat64, cpu());
  auto* gd = static_cast<double*>(grad.raw_data());
  std::fill(gd, gd + grad.size(), 0.0);
  const auto* ogd = static_cast<const double*>(og.dptr);
  const auto* ix = static_cast<const int64_t*>(idx.dptr);
  kernel::parallel_for(g.c, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t k = 0; k < g.rois; ++k) {
      const PoolRegion reg =
          pool_region(static_cast<const double*>(r.dptr) + 5 * k, p.spatial_scale, g);
      if (reg.batch < 0) continue;
      for (int64_t ch = c0; ch < c1; ++ch) {
        double* plane = gd + (reg.batch * g.c + ch) * g.h * g.w;
        const int64_t base = (k * g.c + ch) * g.ph * g.pw;
        for (int64_t b = 0; b < g.ph * g.pw; ++b)
          if (ix[base + b] >= 0 && ix[base + b] < g.h * g.w) plane[ix[base + b]] += ogd[base + b];
      }
    }
  });
  write_req(grad, as_array(out[0]), req[0]);
}

// ============================== multibox_prior ==============================
// SSD's anchors (MXNet's MultiBoxPrior): at each pixel of an (N, C, H, W) map, one box per size
// (aspect ratio 1) and one per further ratio (with the first size), in [0, 1] coordinates.
struct MultiBoxPriorParam {
  std::vector<double> sizes{1.0};
  std::vector<double> ratios{1.0};
  bool clip = false;
  std::vector<double> steps{-1.0, -1.0};
  std::vector<double> offsets{0.5, 0.5};
  static void declare(ParamDecl<MultiBoxPriorParam>& d) {
    d.field("sizes", &MultiBoxPriorParam::sizes)
        .set_default(std::vector<double>{1.0})
        .describe("Box sizes as fractions of the map's height.");
    d.field("ratios", &MultiBoxPriorParam::ratios)
        .set_default(std::vector<double>{1.0})
        .describe("Aspect ratios (width / height); the first is taken as 1, as in MXNet.");
    d.field("clip", &MultiBoxPriorParam::clip)
        .set_default(false)
        .describe("Clip the boxes to [0, 1].");
    d.field("steps", &MultiBoxPriorParam::steps)
        .set_default(std::vector<double>{-1.0, -1.0})
        .describe("(y, x) distance between anchor centres (<= 0: 1 / height, 1 / width).");
    d.field("offsets", &MultiBoxPriorParam::offsets)
        .set_default(std::vector<double>{0.5, 0.5})
        .describe("(y, x) of the first centre, in steps.");
  }
};

void check_prior_params(const MultiBoxPriorParam& p) {
  auto positive = [](const std::vector<double>& v) {
    return !v.empty() &&
           std::all_of(v.begin(), v.end(), [](double x) { return x > 0 && std::isfinite(x); });
  };
  if (!positive(p.sizes) || !positive(p.ratios))
    value_error("[multibox_prior] sizes and ratios must be non-empty and positive");
  if (p.sizes.size() + p.ratios.size() > 4096)
    value_error("[multibox_prior] at most 4096 sizes and ratios, got ",
                p.sizes.size() + p.ratios.size());
  if (p.steps.size() != 2 || p.offsets.size() != 2)
    value_error("[multibox_prior] steps and offsets must hold 2 values (y, x), got ",
                p.steps.size(), " and ", p.offsets.size());
}

bool MultiBoxPriorShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  if (!(*in)[0].is_known()) return false;
  const Shape& s = (*in)[0];
  if (s.ndim() != 4) value_error("[multibox_prior] data must be (N, C, H, W), got shape ", s.str());
  const auto& p = attrs.get<MultiBoxPriorParam>();
  check_prior_params(p);
  const auto per_pixel = static_cast<int64_t>(p.sizes.size() + p.ratios.size() - 1);
  const Shape o{1, s[2] * s[3] * per_pixel, 4};
  checked_size(o, 8, "multibox_prior");
  assign_shape(attrs, &(*out)[0], o, "output", 0);
  return true;
}

void MultiBoxPriorCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                          const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp || out[0].size() == 0) return;
  const auto& p = attrs.get<MultiBoxPriorParam>();
  const int64_t h = in[0].shape[2], w = in[0].shape[3];
  const double step_y = p.steps[0] > 0 ? p.steps[0] : 1.0 / static_cast<double>(h);
  const double step_x = p.steps[1] > 0 ? p.steps[1] : 1.0 / static_cast<double>(w);
  const double aspect = static_cast<double>(h) / static_cast<double>(w);
  // Half width and half height of each anchor of a pixel.
  std::vector<std::pair<double, double>> half;
  for (const double size : p.sizes) half.emplace_back(size * aspect / 2, size / 2);
  for (size_t j = 1; j < p.ratios.size(); ++j) {
    const double r = std::sqrt(p.ratios[j]);
    half.emplace_back(p.sizes[0] * aspect * r / 2, p.sizes[0] / r / 2);
  }
  NDArray result(out[0].shape, DType::kFloat64, cpu());
  auto* o = static_cast<double*>(result.raw_data());
  auto bound = [&p](double v) { return p.clip ? std::clamp(v, 0.0, 1.0) : v; };
  for (int64_t r = 0; r < h; ++r) {
    const double cy = (static_cast<double>(r) + p.offsets[0]) * step_y;
    for (int64_t c = 0; c < w; ++c) {
      const double cx = (static_cast<double>(c) + p.offsets[1]) * step_x;
      for (const auto& [hw, hh] : half) {
        o[0] = bound(cx - hw), o[1] = bound(cy - hh), o[2] = bound(cx + hw), o[3] = bound(cy + hh);
        o += 4;
      }
    }
  }
  write_req(result, as_array(out[0]), req[0]);
}

// ============================== multibox_detection ==============================
// SSD's output (MXNet's MultiBoxDetection): per anchor, the most likely class other than the
// background (class 0) and its box decoded from the anchor and the predicted offsets; rows
// under `threshold` dropped, the rest sorted by score and suppressed by NMS per class.
struct MultiBoxDetectionParam {
  bool clip = true;
  double threshold = 0.01;
  int64_t background_id = 0;
  double nms_threshold = 0.5;
  bool force_suppress = false;
  std::vector<double> variances{0.1, 0.1, 0.2, 0.2};
  int64_t nms_topk = -1;
  static void declare(ParamDecl<MultiBoxDetectionParam>& d) {
    d.field("clip", &MultiBoxDetectionParam::clip)
        .set_default(true)
        .describe("Clip the decoded boxes to [0, 1].");
    d.field("threshold", &MultiBoxDetectionParam::threshold)
        .set_default(0.01)
        .describe("Detections of lower probability are dropped.");
    d.field("background_id", &MultiBoxDetectionParam::background_id)
        .set_default(int64_t{0})
        .describe(
            "The background class; MXNet's kernel takes class 0 whatever it says, and "
            "so does ndx's (any other value is a ValueError).");
    d.field("nms_threshold", &MultiBoxDetectionParam::nms_threshold)
        .set_default(0.5)
        .describe(
            "IoU at or above which the lower-scored box of a class is suppressed "
            "(outside (0, 1]: no suppression).");
    d.field("force_suppress", &MultiBoxDetectionParam::force_suppress)
        .set_default(false)
        .describe("Suppress across classes too.");
    d.field("variances", &MultiBoxDetectionParam::variances)
        .set_default(std::vector<double>{0.1, 0.1, 0.2, 0.2})
        .describe("Scales of the (x, y, w, h) offsets.");
    d.field("nms_topk", &MultiBoxDetectionParam::nms_topk)
        .set_default(int64_t{-1})
        .describe("Only the nms_topk most likely detections are kept (<= 0: all).");
  }
};

bool MultiBoxDetectionShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  for (const auto& s : *in)
    if (!s.is_known()) return false;
  const Shape &cls = (*in)[0], &loc = (*in)[1], &anchor = (*in)[2];
  const auto& p = attrs.get<MultiBoxDetectionParam>();
  if (p.variances.size() != 4)
    value_error("[multibox_detection] variances must hold 4 values, got ", p.variances.size());
  if (p.background_id != 0)
    value_error("[multibox_detection] background_id must be 0 (class 0 is the background), got ",
                p.background_id);
  if (cls.ndim() != 3 || cls[1] < 1)
    value_error("[multibox_detection] cls_prob must be (batch, classes, anchors), got shape ",
                cls.str());
  if (loc.ndim() != 2 || loc[0] != cls[0] || loc[1] != 4 * cls[2])
    value_error("[multibox_detection] loc_pred must be (", cls[0], ", ", 4 * cls[2],
                "), got shape ", loc.str());
  if (anchor.ndim() != 3 || anchor[0] != 1 || anchor[1] != cls[2] || anchor[2] != 4)
    value_error("[multibox_detection] anchor must be (1, ", cls[2], ", 4), got shape ",
                anchor.str());
  assign_shape(attrs, &(*out)[0], Shape{cls[0], cls[2], 6}, "output", 0);
  return true;
}

// The box of anchor a moved by the offsets d (both [4]), as MXNet decodes it.
void decode_box(const double* a, const double* d, const MultiBoxDetectionParam& p, double* out) {
  const double aw = a[2] - a[0], ah = a[3] - a[1];
  const double ax = (a[0] + a[2]) / 2, ay = (a[1] + a[3]) / 2;
  const double ox = d[0] * p.variances[0] * aw + ax, oy = d[1] * p.variances[1] * ah + ay;
  const double ow = std::exp(d[2] * p.variances[2]) * aw / 2;
  const double oh = std::exp(d[3] * p.variances[3]) * ah / 2;
  const double box[4] = {ox - ow, oy - oh, ox + ow, oy + oh};
  for (int k = 0; k < 4; ++k) out[k] = p.clip ? std::clamp(box[k], 0.0, 1.0) : box[k];
}

// IoU of corner boxes; 0 where the union is not positive.
double corner_iou(const double* a, const double* b) {
  const double w = std::max(0.0, std::min(a[2], b[2]) - std::max(a[0], b[0]));
  const double h = std::max(0.0, std::min(a[3], b[3]) - std::max(a[1], b[1]));
  const double i = w * h;
  const double u = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - i;
  return u <= 0 ? 0.0 : i / u;
}

void detect_batch(const double* cls, const double* loc, const double* anchors, int64_t classes,
                  int64_t anchors_n, const MultiBoxDetectionParam& p, double* out) {
  std::vector<std::array<double, 6>> rows;
  for (int64_t i = 0; i < anchors_n; ++i) {
    double score = -1;
    int64_t id = 0;
    for (int64_t j = 1; j < classes; ++j)
      if (cls[j * anchors_n + i] > score) score = cls[j * anchors_n + i], id = j;
    if (id == 0 || score < p.threshold) continue;
    std::array<double, 6> row{static_cast<double>(id - 1), score};
    decode_box(anchors + 4 * i, loc + 4 * i, p, row.data() + 2);
    rows.push_back(row);
  }
  std::fill(out, out + anchors_n * 6, -1.0);
  const bool nms = p.nms_threshold > 0 && p.nms_threshold <= 1;
  if (nms)
    std::stable_sort(rows.begin(), rows.end(),
                     [](const auto& a, const auto& b) { return a[1] > b[1]; });
  size_t keep = rows.size();
  if (nms && p.nms_topk > 0 && static_cast<size_t>(p.nms_topk) < keep) {
    keep = static_cast<size_t>(p.nms_topk);
    // MXNet keeps the rows past nms_topk, marked -1.
    for (size_t i = keep; i < rows.size(); ++i) rows[i][0] = -1;
  }
  if (nms)
    for (size_t i = 0; i < keep; ++i) {
      if (rows[i][0] < 0) continue;
      for (size_t j = i + 1; j < keep; ++j)
        if (rows[j][0] >= 0 && (p.force_suppress || rows[i][0] == rows[j][0]) &&
            corner_iou(rows[i].data() + 2, rows[j].data() + 2) >= p.nms_threshold)
          rows[j][0] = -1;
    }
  for (size_t i = 0; i < rows.size(); ++i) std::copy(rows[i].begin(), rows[i].end(), out + 6 * i);
}

void MultiBoxDetectionCompute(const NodeAttrs& attrs, const OpContext&,
                              const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                              const std::vector<TBlob>& out) {
  if (req[0] == kNullOp || out[0].size() == 0) return;
  const auto& p = attrs.get<MultiBoxDetectionParam>();
  const int64_t batches = in[0].shape[0], classes = in[0].shape[1], n = in[0].shape[2];
  std::vector<NDArray> keep;
  const TBlob cls = kernel::cast_blob(in[0], DType::kFloat64, &keep);
  const TBlob loc = kernel::cast_blob(in[1], DType::kFloat64, &keep);
  const TBlob anchors = kernel::cast_blob(in[2], DType::kFloat64, &keep);
  NDArray result(out[0].shape, DType::kFloat64, cpu());
  auto* o = static_cast<double*>(result.raw_data());
  kernel::parallel_for(batches, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      detect_batch(static_cast<const double*>(cls.dptr) + b * classes * n,
                   static_cast<const double*>(loc.dptr) + b * n * 4,
                   static_cast<const double*>(anchors.dptr), classes, n, p, o + b * n * 6);
  });
  write_req(result, as_array(out[0]), req[0]);
}

// ============================== multibox_target ==============================
// SSD's training targets (MXNet's MultiBoxTarget): each ground-truth box claims its best anchor
// (greedy, by IoU), other anchors whose best IoU passes `overlap_threshold` are positives too;
// positives get the class + 1 and the offsets of their box, negatives class 0 (all of them, or
// with negative mining the ones the classifier finds least like background), the rest
// `ignore_label`.
struct MultiBoxTargetParam {
  double overlap_threshold = 0.5;
  double ignore_label = -1;
  double negative_mining_ratio = -1;
  double negative_mining_thresh = 0.5;
  int64_t minimum_negative_samples = 0;
  std::vector<double> variances{0.1, 0.1, 0.2, 0.2};
  static void declare(ParamDecl<MultiBoxTargetParam>& d) {
    d.field("overlap_threshold", &MultiBoxTargetParam::overlap_threshold)
        .set_default(0.5)
        .describe(
            "An anchor whose best IoU with a box exceeds this is a positive (<= 0: only "
            "the greedy matches).");
    d.field("ignore_label", &MultiBoxTargetParam::ignore_label)
        .set_default(-1.0)
        .describe("cls_target of anchors that are neither positive nor negative.");
    d.field("negative_mining_ratio", &MultiBoxTargetParam::negative_mining_ratio)
        .set_default(-1.0)
        .describe(
            "At most this many negatives per positive, the hardest first (<= 0: every "
            "anchor that is not a positive is a negative).");
    d.field("negative_mining_thresh", &MultiBoxTargetParam::negative_mining_thresh)
        .set_default(0.5)
        .describe("With mining, only anchors whose best IoU is below this can be negatives.");
    d.field("minimum_negative_samples", &MultiBoxTargetParam::minimum_negative_samples)
        .set_default(int64_t{0})
        .describe("With mining, at least this many negatives (as MXNet's GPU kernel).");
    d.field("variances", &MultiBoxTargetParam::variances)
        .set_default(std::vector<double>{0.1, 0.1, 0.2, 0.2})
        .describe("Scales of the (x, y, w, h) offsets.");
  }
};

bool MultiBoxTargetShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  for (const auto& s : *in)
    if (!s.is_known()) return false;
  const Shape &anchor = (*in)[0], &label = (*in)[1], &cls = (*in)[2];
  const auto& p = attrs.get<MultiBoxTargetParam>();
  if (p.variances.size() != 4)
    value_error("[multibox_target] variances must hold 4 values, got ", p.variances.size());
  if (p.negative_mining_ratio > 0 && !(p.negative_mining_thresh > 0))
    value_error("[multibox_target] negative_mining_thresh must be > 0 with negative mining, got ",
                p.negative_mining_thresh);
  if (p.minimum_negative_samples < 0)
    value_error("[multibox_target] minimum_negative_samples must be >= 0, got ",
                p.minimum_negative_samples);
  if (anchor.ndim() != 3 || anchor[0] != 1 || anchor[2] != 4)
    value_error("[multibox_target] anchor must be (1, anchors, 4), got shape ", anchor.str());
  if (label.ndim() != 3 || label[2] < 5)
    value_error("[multibox_target] label must be (batch, boxes, width >= 5), got shape ",
                label.str());
  if (cls.ndim() != 3 || cls[0] != label[0] || cls[1] < 1 || cls[2] != anchor[1])
    value_error("[multibox_target] cls_pred must be (", label[0], ", classes >= 1, ", anchor[1],
                "), got shape ", cls.str());
  const Shape loc{label[0], 4 * anchor[1]};
  assign_shape(attrs, &(*out)[0], loc, "loc_target", 0);
  assign_shape(attrs, &(*out)[1], loc, "loc_mask", 1);
  assign_shape(attrs, &(*out)[2], Shape{label[0], anchor[1]}, "cls_target", 2);
  return true;
}

// The regression target of ground-truth corners g for anchor corners a (MXNet's encoding).
void encode_box(const double* a, const double* g, const std::vector<double>& v, double* out) {
  const double aw = a[2] - a[0], ah = a[3] - a[1];
  const double gw = g[2] - g[0], gh = g[3] - g[1];
  out[0] = ((g[0] + g[2]) / 2 - (a[0] + a[2]) / 2) / aw / v[0];
  out[1] = ((g[1] + g[3]) / 2 - (a[1] + a[3]) / 2) / ah / v[1];
  out[2] = std::log(gw / aw) / v[2];
  out[3] = std::log(gh / ah) / v[3];
}

// One image's anchor flags: 1 positive (match[j] its box), 0 negative, -1 ignored.
struct AnchorMatch {
  std::vector<int8_t> flag;
  std::vector<int64_t> match;
};

// Each box in turn claims the free anchor of highest IoU with any free box (above 1e-6);
// then, with a positive overlap_threshold, every other anchor whose best IoU exceeds it.
AnchorMatch match_anchors(const std::vector<double>& iou, int64_t n, int64_t boxes,
                          double overlap_threshold) {
  AnchorMatch m{std::vector<int8_t>(n, -1), std::vector<int64_t>(n, -1)};
  std::vector<char> box_taken(boxes, 0);
  for (int64_t round = 0; round < boxes; ++round) {
    double best = 1e-6;
    int64_t ba = -1, bb = -1;
    for (int64_t j = 0; j < n; ++j) {
      if (m.flag[j] == 1) continue;
      for (int64_t k = 0; k < boxes; ++k)
        if (!box_taken[k] && iou[j * boxes + k] > best) best = iou[j * boxes + k], ba = j, bb = k;
    }
    if (ba < 0) break;
    m.flag[ba] = 1, m.match[ba] = bb, box_taken[bb] = 1;
  }
  if (overlap_threshold > 0)
    for (int64_t j = 0; j < n; ++j) {
      if (m.flag[j] == 1) continue;
      const double* row = iou.data() + j * boxes;
      const int64_t k = std::max_element(row, row + boxes) - row;
      if (row[k] > overlap_threshold) m.flag[j] = 1, m.match[j] = k;
    }
  return m;
}

// Negative mining: of the anchors not positive whose best IoU is under the threshold, the
// ones of lowest background probability (softmax of their class scores), ties by index.
void mine_negatives(AnchorMatch* m, const std::vector<double>& iou, int64_t boxes,
                    const double* cls, int64_t classes, const MultiBoxTargetParam& p) {
  const auto n = static_cast<int64_t>(m->flag.size());
  const int64_t positives = std::count(m->flag.begin(), m->flag.end(), int8_t{1});
  auto wanted = static_cast<int64_t>(static_cast<double>(positives) * p.negative_mining_ratio);
  wanted = std::min(std::max(wanted, p.minimum_negative_samples), n - positives);
  if (wanted <= 0) return;
  std::vector<std::pair<double, int64_t>> candidates;
  for (int64_t j = 0; j < n; ++j) {
    if (m->flag[j] == 1) continue;
    const double* row = iou.data() + j * boxes;
    if (*std::max_element(row, row + boxes) >= p.negative_mining_thresh) continue;
    double top = cls[j];
    for (int64_t c = 1; c < classes; ++c) top = std::max(top, cls[c * n + j]);
    double sum = 0;
    for (int64_t c = 0; c < classes; ++c) sum += std::exp(cls[c * n + j] - top);
    candidates.emplace_back(std::exp(cls[j] - top) / sum, j);
  }
  wanted = std::min<int64_t>(wanted, static_cast<int64_t>(candidates.size()));
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (int64_t i = 0; i < wanted; ++i) m->flag[candidates[i].second] = 0;
}

struct TargetRows {
  double *loc, *mask, *cls;
};

void target_batch(const double* anchors, int64_t n, const double* label, int64_t rows,
                  int64_t width, const double* cls, int64_t classes, const MultiBoxTargetParam& p,
                  TargetRows o) {
  std::fill(o.loc, o.loc + 4 * n, 0.0);
  std::fill(o.mask, o.mask + 4 * n, 0.0);
  std::fill(o.cls, o.cls + n, p.ignore_label);
  int64_t boxes = 0;  // the labels end at the first row of class -1
  while (boxes < rows && label[boxes * width] != -1.0) ++boxes;
  if (boxes == 0 || n == 0) return;
  std::vector<double> iou(n * boxes);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t k = 0; k < boxes; ++k)
      iou[j * boxes + k] = corner_iou(anchors + 4 * j, label + k * width + 1);
  AnchorMatch m = match_anchors(iou, n, boxes, p.overlap_threshold);
  if (p.negative_mining_ratio > 0)
    mine_negatives(&m, iou, boxes, cls, classes, p);
  else
    for (auto& f : m.flag) f = f == 1 ? int8_t{1} : int8_t{0};
  for (int64_t j = 0; j < n; ++j) {
    if (m.flag[j] == 0) o.cls[j] = 0;
    if (m.flag[j] != 1) continue;
    const double* box = label + m.match[j] * width;
    o.cls[j] = box[0] + 1;  // class 0 is the background
    std::fill(o.mask + 4 * j, o.mask + 4 * j + 4, 1.0);
    encode_box(anchors + 4 * j, box + 1, p.variances, o.loc + 4 * j);
  }
}

void MultiBoxTargetCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                           const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const auto& p = attrs.get<MultiBoxTargetParam>();
  const int64_t n = in[0].shape[1], batches = in[1].shape[0], rows = in[1].shape[1],
                width = in[1].shape[2], classes = in[2].shape[1];
  // Each image keeps the IoU of every (anchor, box) pair: 2 GiB at most, as a typed error.
  constexpr int64_t kMaxPairs = int64_t{1} << 28;
  if (rows > 0 && n > kMaxPairs / rows)
    memory_error("[multibox_target] ", n, " anchors x ", rows, " label rows is more than the ",
                 kMaxPairs, " IoU pairs an image may hold");
  std::vector<NDArray> keep;
  const auto* anchors =
      static_cast<const double*>(kernel::cast_blob(in[0], DType::kFloat64, &keep).dptr);
  const auto* label =
      static_cast<const double*>(kernel::cast_blob(in[1], DType::kFloat64, &keep).dptr);
  const auto* cls =
      static_cast<const double*>(kernel::cast_blob(in[2], DType::kFloat64, &keep).dptr);
  std::array<NDArray, 3> result{NDArray(out[0].shape, DType::kFloat64, cpu()),
                                NDArray(out[1].shape, DType::kFloat64, cpu()),
                                NDArray(out[2].shape, DType::kFloat64, cpu())};
  auto* loc = static_cast<double*>(result[0].raw_data());
  auto* mask = static_cast<double*>(result[1].raw_data());
  auto* cls_t = static_cast<double*>(result[2].raw_data());
  kernel::parallel_for(batches, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      target_batch(anchors, n, label + b * rows * width, rows, width, cls + b * classes * n,
                   classes, p, {loc + b * 4 * n, mask + b * 4 * n, cls_t + b * n});
  });
  for (int i = 0; i < 3; ++i)
    if (req[i] != kNullOp) write_req(result[i], as_array(out[i]), req[i]);
}

// ============================== box_encode / box_decode ==============================
// MXNet's box_encode: for (batch, anchors) samples (> 0.5: positive) and matches (an index
// into refs), the offsets of each positive anchor's matched box, normalized by means / stds,
// and a mask of the positives; other anchors get zeros.
bool BoxEncodeShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  for (const auto& s : *in)
    if (!s.is_known()) return false;
  const Shape &samples = (*in)[0], &matches = (*in)[1], &anchors = (*in)[2], &refs = (*in)[3];
  if (samples.ndim() != 2)
    value_error("[box_encode] samples must be (batch, anchors), got shape ", samples.str());
  const int64_t b = samples[0], n = samples[1];
  if (matches != samples)
    value_error("[box_encode] matches must have samples' shape ", samples.str(), ", got ",
                matches.str());
  if (anchors != Shape{b, n, 4})
    value_error("[box_encode] anchors must be (", b, ", ", n, ", 4), got shape ", anchors.str());
  if (refs.ndim() != 3 || refs[0] != b || refs[2] != 4)
    value_error("[box_encode] refs must be (", b, ", boxes, 4), got shape ", refs.str());
  for (int i : {4, 5})
    if ((*in)[i] != Shape{4})
      value_error("[box_encode] ", i == 4 ? "means" : "stds", " must have shape (4,), got ",
                  (*in)[i].str());
  assign_shape(attrs, &(*out)[0], anchors, "targets", 0);
  assign_shape(attrs, &(*out)[1], anchors, "masks", 1);
  return true;
}

// samples and matches any real dtype; anchors, refs, means and stds floats; the outputs
// take anchors' dtype.
bool BoxEncodeType(const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
  for (const DType t : *in)
    if (t == DType::kUnknown) return false;
  const char* names[] = {"samples", "matches", "anchors", "refs", "means", "stds"};
  for (int i = 0; i < 2; ++i)
    if (is_complex((*in)[i]))
      type_error("[box_encode] ", names[i], " must be real, got ", dtype_name((*in)[i]));
  for (int i = 2; i < 6; ++i) require_float(attrs, (*in)[i], names[i]);
  for (int j = 0; j < 2; ++j) assign_type(attrs, &(*out)[j], (*in)[2], "output", j);
  return true;
}

void BoxEncodeCompute(const NodeAttrs&, const OpContext&, const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const int64_t b = in[0].shape[0], n = in[0].shape[1], m = in[3].shape[1];
  std::vector<NDArray> keep;
  std::array<const double*, 6> x{};
  for (int i = 0; i < 6; ++i)
    x[i] = static_cast<const double*>(kernel::cast_blob(in[i], DType::kFloat64, &keep).dptr);
  const double *samples = x[0], *matches = x[1], *anchors = x[2], *refs = x[3], *means = x[4],
               *stds = x[5];
  for (int64_t i = 0; i < b * n; ++i)  // every index read is checked before anything is written
    if (samples[i] > 0.5 &&  // the index is the match truncated, as MXNet's cast to an int
        !(std::trunc(matches[i]) >= 0 && std::trunc(matches[i]) < static_cast<double>(m)))
      index_error("[box_encode] matches[", i / n, ", ", i % n, "] = ", matches[i],
                  " is outside [0, ", m, ") for a positive sample");
  NDArray targets(out[0].shape, DType::kFloat64, cpu()),
      masks(out[1].shape, DType::kFloat64, cpu());
  auto* t = static_cast<double*>(targets.raw_data());
  auto* k = static_cast<double*>(masks.raw_data());
  const std::vector<double> ones{1, 1, 1, 1};
  for (int64_t i = 0; i < b * n; ++i) {
    const bool positive = samples[i] > 0.5;
    std::fill(k + 4 * i, k + 4 * i + 4, positive ? 1.0 : 0.0);
    std::fill(t + 4 * i, t + 4 * i + 4, 0.0);
    if (!positive) continue;
    const auto match = static_cast<int64_t>(matches[i]);
    encode_box(anchors + 4 * i, refs + ((i / n) * m + match) * 4, ones, t + 4 * i);
    for (int c = 0; c < 4; ++c) t[4 * i + c] = (t[4 * i + c] - means[c]) / stds[c];
  }
  if (req[0] != kNullOp) write_req(targets, as_array(out[0]), req[0]);
  if (req[1] != kNullOp) write_req(masks, as_array(out[1]), req[1]);
}

struct BoxDecodeParam {
  double std0 = 1, std1 = 1, std2 = 1, std3 = 1;
  double clip = -1;
  std::string format = "center";
  static void declare(ParamDecl<BoxDecodeParam>& d) {
    d.field("std0", &BoxDecodeParam::std0).set_default(1.0).describe("Scale of the x offset.");
    d.field("std1", &BoxDecodeParam::std1).set_default(1.0).describe("Scale of the y offset.");
    d.field("std2", &BoxDecodeParam::std2).set_default(1.0).describe("Scale of the log width.");
    d.field("std3", &BoxDecodeParam::std3).set_default(1.0).describe("Scale of the log height.");
    d.field("clip", &BoxDecodeParam::clip)
        .set_default(-1.0)
        .describe("If > 0, the scaled log width and height are clipped to it before exp.");
    d.field("format", &BoxDecodeParam::format)
        .set_default(std::string("center"))
        .set_enum({"corner", "center"})
        .describe("The anchors' format: corner [xmin, ymin, xmax, ymax] or center [x, y, w, h].");
  }
};

bool BoxDecodeShape(const NodeAttrs& attrs, ShapeVector* in, ShapeVector* out) {
  for (const auto& s : *in)
    if (!s.is_known()) return false;
  const Shape &data = (*in)[0], &anchors = (*in)[1];
  if (data.ndim() != 3 || data[2] != 4)
    value_error("[box_decode] data must be (batch, anchors, 4), got shape ", data.str());
  if (anchors != Shape{1, data[1], 4})
    value_error("[box_decode] anchors must be (1, ", data[1], ", 4), got shape ", anchors.str());
  assign_shape(attrs, &(*out)[0], data, "output", 0);
  return true;
}

void BoxDecodeCompute(const NodeAttrs& attrs, const OpContext&, const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  if (req[0] == kNullOp) return;
  const auto& p = attrs.get<BoxDecodeParam>();
  const int64_t n = in[0].shape[1], rows = in[0].shape[0] * n;
  std::vector<NDArray> keep;
  const auto* x = static_cast<const double*>(kernel::cast_blob(in[0], DType::kFloat64, &keep).dptr);
  const auto* a = static_cast<const double*>(kernel::cast_blob(in[1], DType::kFloat64, &keep).dptr);
  NDArray result(out[0].shape, DType::kFloat64, cpu());
  auto* o = static_cast<double*>(result.raw_data());
  const bool corner = p.format == "corner";
  auto scale = [&p](double v) { return std::exp(p.clip > 0 ? std::min(v, p.clip) : v); };
  for (int64_t i = 0; i < rows; ++i) {
    const double* an = a + 4 * (i % n);
    const double aw = corner ? an[2] - an[0] : an[2], ah = corner ? an[3] - an[1] : an[3];
    const double ax = corner ? an[0] + aw / 2 : an[0], ay = corner ? an[1] + ah / 2 : an[1];
    const double* d = x + 4 * i;
    const double cx = d[0] * p.std0 * aw + ax, cy = d[1] * p.std1 * ah + ay;
    const double hw = scale(d[2] * p.std2) * aw / 2, hh = scale(d[3] * p.std3) * ah / 2;
    o[4 * i] = cx - hw, o[4 * i + 1] = cy - hh, o[4 * i + 2] = cx + hw, o[4 * i + 3] = cy + hh;
  }
  write_req(result, as_array(out[0]), req[0]);
}

[[maybe_unused]] const bool registered = [] {
  OpRegistry::global()
      .register_op("_npx_box_nms")
      .describe(
          "Non-maximum suppression of (..., boxes, width) rows [id, score, coordinates, ...]: "
          "kept boxes first in descending score, removed rows -1; the gradient follows each "
          "kept box back to its input row (MXNet's box_nms).")
      .set_num_inputs(1)
      .set_num_outputs(2)
      .add_argument("data", "NDArray", "Box rows, any float dtype.")
      .set_params<BoxNmsParam>()
      .set_attr<FNumVisibleOutputs>("FNumVisibleOutputs", [](const NodeAttrs&) { return 1u; })
      .set_attr<FListOutputNames>("FListOutputNames",
                                  [](const NodeAttrs&) {
                                    return std::vector<std::string>{"output", "source_row"};
                                  })
      .set_attr<FInferShape>("FInferShape", BoxNmsShape)
      .set_attr<FInferType>("FInferType", BoxNmsType)
      .set_attr<FCompute>("FCompute<cpu>", BoxNmsCompute)
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        return std::vector<NodeEntry>{
            make_node("_backward_npx_box_nms", {og[0], NodeEntry{n, 1, 0}})};
      });
  OpRegistry::global()
      .register_op("_backward_npx_box_nms")
      .describe("Backward of _npx_box_nms: (ograd, source_row) -> ograd's rows at their source.")
      .set_num_inputs(2)
      .add_argument("ograd", "NDArray", "Gradient of the output.")
      .add_argument("source_row", "NDArray", "The forward's hidden output.")
      .set_attr<FInferShape>("FInferShape", BoxNmsBackwardShape)
      .set_attr<FInferType>("FInferType", BoxNmsBackwardType)
      .set_attr<TIsBackward>("TIsBackward", true)
      .set_attr<FCompute>("FCompute<cpu>", BoxNmsBackwardCompute);
  OpRegistry::global()
      .register_op("_npx_bipartite_matching")
      .describe(
          "Greedy one-to-one matching of (..., rows, columns) scores: the column matched to "
          "each row and the row matched to each column, -1 where none (MXNet's "
          "bipartite_matching).")
      .set_num_inputs(1)
      .set_num_outputs(2)
      .add_argument("data", "NDArray", "Scores, any float dtype.")
      .set_params<BipartiteMatchingParam>()
      .set_attr<FInferShape>("FInferShape", MatchingShape)
      .set_attr<FInferType>("FInferType", MatchingType)
      .set_attr<FCompute>("FCompute<cpu>", MatchingCompute)
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  OpRegistry::global()
      .register_op("_npx_roi_pooling")
      .describe(
          "RoIPooling (MXNet's ROIPooling): (R, C, ph, pw) maxima of the bins of each region "
          "[batch, x1, y1, x2, y2] rounded to the feature grid; empty bins and rows with a "
          "batch index outside [0, N) give zeros.")
      .set_num_inputs(2)
      .set_num_outputs(2)
      .add_argument("data", "NDArray", "Features (N, C, H, W), any float dtype.")
      .add_argument("rois", "NDArray", "Regions (R, 5): batch index and corners.")
      .set_params<RoiPoolingParam>()
      .set_attr<FNumVisibleOutputs>("FNumVisibleOutputs", [](const NodeAttrs&) { return 1u; })
      .set_attr<FListOutputNames>("FListOutputNames",
                                  [](const NodeAttrs&) {
                                    return std::vector<std::string>{"output", "max_index"};
                                  })
      .set_attr<FInferShape>("FInferShape", RoiPoolingShape)
      .set_attr<FInferType>("FInferType", RoiPoolingType)
      .set_attr<FCompute>("FCompute<cpu>", RoiPoolingCompute)
      .set_attr<FGradient>("FGradient", [](const NodePtr& n, const std::vector<NodeEntry>& og) {
        return make_grad_node("_backward_npx_roi_pooling", n,
                              {og[0], NodeEntry{n, 1, 0}, n->inputs[0], n->inputs[1]}, true);
      });
  OpRegistry::global()
      .register_op("_backward_npx_roi_pooling")
      .describe(
          "Backward of _npx_roi_pooling: (ograd, max_index, data, rois) -> (data gradient, "
          "zeros).")
      .set_num_inputs(4)
      .set_num_outputs(2)
      .add_argument("ograd", "NDArray", "Gradient of the output.")
      .add_argument("max_index", "NDArray", "The forward's hidden output.")
      .add_argument("data", "NDArray", "Forward features.")
      .add_argument("rois", "NDArray", "Forward regions.")
      .set_params<RoiPoolingParam>()
      .set_attr<FInferShape>("FInferShape", RoiPoolingBackwardShape)
      .set_attr<FInferType>("FInferType", RoiPoolingBackwardType)
      .set_attr<TIsBackward>("TIsBackward", true)
      .set_attr<FCompute>("FCompute<cpu>", RoiPoolingBackwardCompute);
  OpRegistry::global()
      .register_op("_npx_multibox_prior")
      .describe(
          "SSD anchors for an (N, C, H, W) feature map: (1, H * W * (sizes + ratios - 1), 4) "
          "corner boxes in [0, 1] (MXNet's MultiBoxPrior).")
      .set_num_inputs(1)
      .add_argument("data", "NDArray", "The feature map (only its shape is read).")
      .set_params<MultiBoxPriorParam>()
      .set_attr<FInferShape>("FInferShape", MultiBoxPriorShape)
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return float_inputs_type(attrs, in, out, {"data"});
                            })
      .set_attr<FCompute>("FCompute<cpu>", MultiBoxPriorCompute)
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  OpRegistry::global()
      .register_op("_npx_multibox_detection")
      .describe(
          "SSD detections (MXNet's MultiBoxDetection): (batch, anchors, 6) rows [class, score, "
          "xmin, ymin, xmax, ymax], kept detections first by score, the rest -1.")
      .set_num_inputs(3)
      .add_argument("cls_prob", "NDArray",
                    "(batch, classes, anchors) probabilities, class 0 "
                    "the background.")
      .add_argument("loc_pred", "NDArray", "(batch, anchors * 4) predicted offsets.")
      .add_argument("anchor", "NDArray", "(1, anchors, 4) corner anchors.")
      .set_params<MultiBoxDetectionParam>()
      .set_attr<FInferShape>("FInferShape", MultiBoxDetectionShape)
      .set_attr<FInferType>(
          "FInferType",
          [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
            return float_inputs_type(attrs, in, out, {"cls_prob", "loc_pred", "anchor"});
          })
      .set_attr<FCompute>("FCompute<cpu>", MultiBoxDetectionCompute)
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  OpRegistry::global()
      .register_op("_npx_roi_align")
      .describe(
          "RoIAlign (MXNet's ROIAlign): (R, C, ph, pw) averages of bilinear samples of (N, C, "
          "H, W) features inside each region [batch, x1, y1, x2, y2]; rows with a batch index "
          "outside [0, N) give zeros.")
      .set_num_inputs(2)
      .add_argument("data", "NDArray", "Features (N, C, H, W), any float dtype.")
      .add_argument("rois", "NDArray", "Regions (R, 5): batch index and corners.")
      .set_params<RoiAlignParam>()
      .set_attr<FInferShape>("FInferShape", RoiAlignShape)
      .set_attr<FInferType>("FInferType", RoiAlignType)
      .set_attr<FCompute>("FCompute<cpu>", RoiAlignCompute)
      .set_attr<FGradient>("FGradient", ElemwiseGradUseIn{"_backward_npx_roi_align"});
  OpRegistry::global()
      .register_op("_backward_npx_roi_align")
      .describe("Backward of _npx_roi_align: (ograd, data, rois) -> (data gradient, zeros).")
      .set_num_inputs(3)
      .set_num_outputs(2)
      .add_argument("ograd", "NDArray", "Gradient of the output.")
      .add_argument("data", "NDArray", "Forward features.")
      .add_argument("rois", "NDArray", "Forward regions.")
      .set_params<RoiAlignParam>()
      .set_attr<FInferShape>("FInferShape", RoiAlignBackwardShape)
      .set_attr<FInferType>("FInferType", RoiAlignBackwardType)
      .set_attr<TIsBackward>("TIsBackward", true)
      .set_attr<FCompute>("FCompute<cpu>", RoiAlignBackwardCompute);
  OpRegistry::global()
      .register_op("_npx_multibox_target")
      .describe(
          "SSD training targets (MXNet's MultiBoxTarget): loc_target and loc_mask (batch, "
          "anchors * 4) and cls_target (batch, anchors): class + 1 for positives, 0 for "
          "negatives, ignore_label for the rest.")
      .set_num_inputs(3)
      .set_num_outputs(3)
      .add_argument("anchor", "NDArray", "(1, anchors, 4) corner anchors.")
      .add_argument("label", "NDArray",
                    "(batch, boxes, width >= 5) rows [class, xmin, ymin, xmax, ymax, ...]; a "
                    "row of class -1 ends an image's boxes.")
      .add_argument("cls_pred", "NDArray", "(batch, classes, anchors) class scores.")
      .set_params<MultiBoxTargetParam>()
      .set_attr<FListOutputNames>(
          "FListOutputNames",
          [](const NodeAttrs&) {
            return std::vector<std::string>{"loc_target", "loc_mask", "cls_target"};
          })
      .set_attr<FInferShape>("FInferShape", MultiBoxTargetShape)
      .set_attr<FInferType>(
          "FInferType",
          [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
            return float_inputs_type(attrs, in, out, {"anchor", "label", "cls_pred"});
          })
      .set_attr<FCompute>("FCompute<cpu>", MultiBoxTargetCompute)
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  OpRegistry::global()
      .register_op("_npx_box_encode")
      .describe(
          "Offsets of each positive anchor's matched box, (x, y, log w, log h) normalized by "
          "means and stds, and the mask of positives (MXNet's box_encode).")
      .set_num_inputs(6)
      .set_num_outputs(2)
      .add_argument("samples", "NDArray", "(batch, anchors): > 0.5 positive.")
      .add_argument("matches", "NDArray", "(batch, anchors): the matched row of refs.")
      .add_argument("anchors", "NDArray", "(batch, anchors, 4) corner anchors.")
      .add_argument("refs", "NDArray", "(batch, boxes, 4) corner boxes.")
      .add_argument("means", "NDArray", "(4,) subtracted from the offsets.")
      .add_argument("stds", "NDArray", "(4,) dividing the offsets.")
      .set_attr<FListOutputNames>("FListOutputNames",
                                  [](const NodeAttrs&) {
                                    return std::vector<std::string>{"targets", "masks"};
                                  })
      .set_attr<FInferShape>("FInferShape", BoxEncodeShape)
      .set_attr<FInferType>("FInferType", BoxEncodeType)
      .set_attr<FCompute>("FCompute<cpu>", BoxEncodeCompute)
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  OpRegistry::global()
      .register_op("_npx_box_decode")
      .describe(
          "Corner boxes from (batch, anchors, 4) offsets and (1, anchors, 4) anchors, "
          "the inverse of box_encode with stds (MXNet's box_decode).")
      .set_num_inputs(2)
      .add_argument("data", "NDArray", "(batch, anchors, 4) offsets.")
      .add_argument("anchors", "NDArray", "(1, anchors, 4) anchors in `format`.")
      .set_params<BoxDecodeParam>()
      .set_attr<FInferShape>("FInferShape", BoxDecodeShape)
      .set_attr<FInferType>("FInferType",
                            [](const NodeAttrs& attrs, DTypeVector* in, DTypeVector* out) {
                              return float_inputs_type(attrs, in, out, {"data", "anchors"});
                            })
      .set_attr<FCompute>("FCompute<cpu>", BoxDecodeCompute)
      .set_attr<FGradient>("FGradient", MakeZeroGradNodes);
  return true;
}();

}  // namespace
}  // namespace ndx
