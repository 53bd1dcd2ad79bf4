// sg.NAME handlers of the everyday composites (sg_ops_everyday.cc, sg_einsum.cc),
// which sg_dispatch.cc's table names.
#pragma once

#include <optional>
#include <string>

#include "staging/stager.h"

namespace sg::compiler::staging {

Value sg_logaddexp(Stager& s, const Args& a, const std::string& name);
Value sg_diff(Stager& s, const Args& a, const std::string& name);
Value sg_flip(Stager& s, const Args& a, const std::string& name);
Value sg_roll(Stager& s, const Args& a, const std::string& name);
Value sg_meshgrid(Stager& s, const Args& a, const std::string& name);
Value sg_outer(Stager& s, const Args& a, const std::string& name);
Value sg_isclose(Stager& s, const Args& a, const std::string& name);  // isclose, allclose
Value sg_einsum(Stager& s, const Args& a, const std::string& name);

// x[lo:hi:step] along `axis` with static bounds (None where not given).
Value slice_along(Stager& s, const Value& x, int64_t axis, std::optional<int64_t> lo, std::optional<int64_t> hi,
                  int64_t step, SourceSpan span);

}  // namespace sg::compiler::staging
