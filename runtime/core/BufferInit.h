// The initial contents of a plan's persistent buffers, made on the host:
// params from their init specs (seeded per param name, so a param's values
// do not depend on the other params), consts from their data.
#ifndef AMPC_RUNTIME_CORE_BUFFERINIT_H
#define AMPC_RUNTIME_CORE_BUFFERINIT_H

#include <cstddef>
#include <utility>
#include <vector>

#include "runtime/core/Plan.h"

namespace ampc::rt {

/// The f32 values a param starts from with run seed `seed`. An f32 master
/// (`<param>.master`, AMP O2) draws the same values as its low-precision
/// param. Throws PlanError for an unknown init kind.
std::vector<float> initialValues(const Plan &plan, const Buffer &param, uint64_t seed);

/// A const buffer's bytes in its dtype.
std::vector<std::byte> constBytes(const Buffer &constant);

/// Fan-in and fan-out of a parameter shape ([in, out] matrices, [Cout, ...]
/// filters), for xavier and kaiming initialisation.
std::pair<double, double> fans(const std::vector<int64_t> &shape);

} // namespace ampc::rt

#endif
