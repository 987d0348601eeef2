// Building small graphs, lowering them and running them in the unit tests.
#ifndef AMPC_TESTS_UNIT_RUNTIMETESTUTIL_H
#define AMPC_TESTS_UNIT_RUNTIMETESTUTIL_H

#include <functional>
#include <map>
#include <memory>
#include <random>

#include "compiler/GraphBuilder.h"
#include "compiler/Lowering.h"
#include "mlir/IR/MLIRContext.h"
#include "runtime/Executor.h"
#include "runtime/Half.h"

namespace ampc::test {

/// A compiled graph with its executor.
struct Compiled {
  rt::Plan plan;
  std::unique_ptr<rt::Executor> ex;

  void set(const std::string &name, const std::vector<double> &values) {
    rt::TensorRef t = ex->tensor(name);
    for (size_t i = 0; i < values.size(); ++i) {
      if (t.dtype == rt::DType::I64) {
        t.as<int64_t>()[i] = (int64_t)values[i];
      } else if (t.dtype == rt::DType::I32) {
        t.as<int32_t>()[i] = (int32_t)values[i];
      } else {
        float f = (float)values[i];
        rt::fromF32(&f, (char *)t.data + i * rt::dtypeSize(t.dtype), t.dtype, 1);
      }
    }
  }

  std::vector<double> get(const std::string &name) const {
    rt::TensorRef t = ex->tensor(name);
    std::vector<float> f(t.size());
    rt::toF32(t.data, t.dtype, f.data(), f.size());
    return std::vector<double>(f.begin(), f.end());
  }
};

inline Compiled compile(const std::function<void(GraphBuilder &)> &build,
                        rt::ExecOptions options = {}) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "test");
  build(b);
  auto module = b.finish();
  Compiled c{lowerToPlan(*module), nullptr};
  c.ex = std::make_unique<rt::Executor>(c.plan, options);
  return c;
}

/// The bytes of every param buffer (params, masters, optimizer state, loss
/// scale) by name: the training state to compare between runs.
inline std::map<std::string, std::vector<char>> paramBytes(const rt::Plan &plan,
                                                           rt::Executor &ex) {
  std::map<std::string, std::vector<char>> state;
  for (const rt::Buffer &b : plan.buffers)
    if (b.kind == rt::BufferKind::Param) {
      rt::TensorRef t = ex.tensor(b.id);
      state[b.name] = std::vector<char>((char *)t.data, (char *)t.data + t.bytes());
    }
  return state;
}

/// `n` values in [-2, 2), each exactly representable in `dtype`.
inline std::vector<double> randomValues(int64_t n, const std::string &dtype, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<double> v(n);
  for (double &x : v) {
    float f = dist(rng);
    if (dtype == "f16")
      f = rt::f16ToF32(rt::f32ToF16(f));
    else if (dtype == "bf16")
      f = rt::bf16ToF32(rt::f32ToBf16(f));
    x = f;
  }
  return v;
}

/// Tolerance of a kernel result in `dtype`: f32 compute, one output rounding.
inline double tolerance(const std::string &dtype, double magnitude) {
  double rel = dtype == "f16" ? 2.0 / 1024 : dtype == "bf16" ? 2.0 / 128 : 2e-6;
  return rel * std::max(magnitude, 1.0);
}

} // namespace ampc::test

#endif
