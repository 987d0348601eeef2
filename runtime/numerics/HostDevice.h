// The one host/device macro of the runtime: numerics marked AMPC_HD compile
// as plain inline C++ for the CPU and, under nvcc, for the GPU as well, so
// that both backends compute element math with the same code.
#ifndef AMPC_RUNTIME_NUMERICS_HOSTDEVICE_H
#define AMPC_RUNTIME_NUMERICS_HOSTDEVICE_H

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define AMPC_HD __host__ __device__ inline
// Before a host/device template that calls what it is given: host code
// passes it host lambdas (a kernel launch per function), device code
// device ones, and neither call is checked against the other side.
#define AMPC_HD_DISPATCH _Pragma("nv_exec_check_disable")
#else
#define AMPC_HD inline
#define AMPC_HD_DISPATCH
#endif

namespace ampc::num {

AMPC_HD uint32_t bitsOf(float v) {
  uint32_t u;
  memcpy(&u, &v, 4);
  return u;
}

AMPC_HD float floatOf(uint32_t u) {
  float v;
  memcpy(&v, &u, 4);
  return v;
}

} // namespace ampc::num

#endif
