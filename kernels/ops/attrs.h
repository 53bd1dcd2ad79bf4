// Node attributes. Each op declares its attributes positionally in the op table
// (name + kind); the file stores them by name, the loader decodes them once into
// positions, and kernels read them by position: no string lookup on the hot path.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sg::ops {

// Numeric values match the schema's sg.fb.AttrKind.
enum class AttrKind : uint8_t { kInt = 0, kInts = 1, kFloat = 2, kFloats = 3, kString = 4 };

struct AttrSpec {
  const char* name;
  AttrKind kind;
  // An optional attribute may be left out (a node then has fewer values); only
  // the last ones of a list are optional, so positions stay the same.
  bool optional = false;
};

struct AttrValue {
  AttrKind kind = AttrKind::kInt;
  int64_t i = 0;
  std::vector<int64_t> ints;
  double f = 0;
  std::vector<double> floats;
  std::string s;

  static AttrValue Int(int64_t v) { AttrValue a; a.kind = AttrKind::kInt; a.i = v; return a; }
  static AttrValue Ints(std::vector<int64_t> v) { AttrValue a; a.kind = AttrKind::kInts; a.ints = std::move(v); return a; }
  static AttrValue Float(double v) { AttrValue a; a.kind = AttrKind::kFloat; a.f = v; return a; }
  static AttrValue Floats(std::vector<double> v) { AttrValue a; a.kind = AttrKind::kFloats; a.floats = std::move(v); return a; }
  static AttrValue String(std::string v) { AttrValue a; a.kind = AttrKind::kString; a.s = std::move(v); return a; }
  bool operator==(const AttrValue&) const = default;
};

// Attribute values in the order of the op's AttrSpec list.
struct Attrs {
  std::vector<AttrValue> values;

  int64_t i(size_t k) const { return values[k].i; }
  const std::vector<int64_t>& ints(size_t k) const { return values[k].ints; }
  double f(size_t k) const { return values[k].f; }
  const std::vector<double>& floats(size_t k) const { return values[k].floats; }
  const std::string& s(size_t k) const { return values[k].s; }
  bool operator==(const Attrs&) const = default;
};

}  // namespace sg::ops
