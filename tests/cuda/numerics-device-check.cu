// The shared numerics (runtime/numerics) on the GPU against the same code on
// the host, over every finite f16 input: bit for bit where a functor is
// plain arithmetic (IEEE +, -, *, / and sqrt, which CUDA rounds exactly
// without fast math, and with --fmad=false so no multiply-add is fused), and
// within a stated tolerance where it calls a transcendental (CUDA's expf,
// tanhf, logf, powf, sinf and cosf are not glibc's): 3 ulp (spread). GELU,
// sigmoid and erf are exact: numerics/Erf.h and vectorExp are arithmetic.
// The device's f32 to f16 conversion (the hardware's) is compared with the
// integer rounding on all 2^32 f32 bit patterns. Prints one line per function.
// Exit 0: all agree; 1: a disagreement; 77 (skipped): no CUDA device.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#include "runtime/numerics/Activations.h"
#include "runtime/numerics/Exp.h"
#include "runtime/numerics/Finite.h"
#include "runtime/numerics/Half.h"
#include "runtime/numerics/LossScale.h"
#include "runtime/numerics/Optimizers.h"
#include "runtime/numerics/Random.h"

using namespace ampc::num;

namespace {

struct Function {
  const char *name;
  bool exact; // plain arithmetic: the GPU must give the host's bits
};

const Function kFunctions[] = {
    {"relu", true},        {"abs", true},          {"neg", true},
    {"square", true},      {"scale", true},        {"sqrt", true},
    {"rsqrt", true},       {"vectorExp", true},    {"f16 round trip", true},
    {"bf16 round trip", true}, {"non-finite", true}, {"dropout", true},
    {"sgd", true},         {"momentum", true},     {"loss scale", true},
    {"relu'", true},       {"tanh'", true},        {"sigmoid'", true},
    {"sqrt'", true},       {"rsqrt'", true},       {"log'", true},
    {"square'", true},     {"exp", false},         {"log", false},
    {"tanh", false},       {"sigmoid", true},      {"gelu", true},
    {"gelu_tanh", true},   {"pow", false},         {"gelu'", true},
    {"gelu_tanh'", true},  {"adam", false},        {"sin", false},
    {"cos", false},        {"ema", true},          {"lamb", false},
    {"lion", true},        {"rmsprop", true},      {"adagrad", true},
    {"erf", true},         {"erf'", true},
};
constexpr int kCount = sizeof(kFunctions) / sizeof(kFunctions[0]);

/// Function `fn` at input x; `y` is the host's forward value where a
/// derivative reads one, so the derivative's own arithmetic is compared.
AMPC_HD float evaluate(int fn, float x, float y) {
  switch (fn) {
  case 0: return Relu{}.value(x);
  case 1: return Abs{}.value(x);
  case 2: return Neg{}.value(x);
  case 3: return Square{}.value(x);
  case 4: return Scale{0.125f, 3.0f}.value(x);
  case 5: return Sqrt{}.value(x);
  case 6: return Rsqrt{}.value(x);
  case 7: return vectorExp(x < 88.0f ? x : 88.0f);
  case 8: return f16ToF32(f32ToF16(x * 1.0009765625f));
  case 9: return bf16ToF32(f32ToBf16(x * 1.0009765625f));
  case 10: return float(isNonFiniteF32(x * x * x)) + 2.0f * float(isNonFiniteF16(f32ToF16(x)));
  case 11: return dropoutAt(x, dropoutStream(3, 7, 5), bitsOf(x), 0.3, 1.0f / 0.7f);
  case 12: {
    float p = 0.5f;
    SgdUpdate{0.01f}(p, x);
    return p;
  }
  case 13: {
    float p = 0.5f, v = 0.25f;
    MomentumUpdate{0.01f, 0.9f}(p, x, v);
    return p + v;
  }
  case 14: {
    LossScaleState s{x > 0 ? x : 1.0f, 1999.0f, 0.0f};
    updateLossScale(isNonFiniteF32(x - x), s, LossScaleRule{});
    return s.scale + s.good;
  }
  case 15: return Relu{}.derivative(x, y);
  case 16: return Tanh{}.derivative(x, y);
  case 17: return Sigmoid{}.derivative(x, y);
  case 18: return Sqrt{}.derivative(x, y);
  case 19: return Rsqrt{}.derivative(x, y);
  case 20: return Log{}.derivative(x, y);
  case 21: return Square{}.derivative(x, y);
  case 22: return Exp{}.value(x);
  case 23: return Log{}.value(x);
  case 24: return Tanh{}.value(x);
  case 25: return Sigmoid{}.value(x);
  case 26: return Gelu{}.value(x);
  case 27: return GeluTanh{}.value(x);
  case 28: return Pow{2.5f}.value(x);
  case 29: return Gelu{}.derivative(x, y);
  case 30: return GeluTanh{}.derivative(x, y);
  case 31: {
    float p = 0.5f, m = 0.1f, v = 0.2f;
    AdamUpdate::at(1e-3f, 0.9, 0.999, 1e-8, 0.01, 3)(p, x, m, v);
    return p;
  }
  case 32: return Sin{}.value(x); // sin' and cos' are these functions
  case 33: return Cos{}.value(x);
  case 34: { // both sides of the lerp: a weight below and above one half
    float slow = 0.5f, fast = 0.5f;
    EmaUpdate::at(0.999, true, 3)(slow, x);
    EmaUpdate::at(0.2, false, 0)(fast, x);
    return slow + fast;
  }
  case 35: { // the moments and direction, then a step by a trust ratio
    float p = 0.5f, m = 0.1f, v = 0.2f;
    LambUpdate update = LambUpdate::at(1e-3f, 0.9, 0.999, 1e-6, 0.01, 3, true);
    float u = update.moments(p, x, m, v);
    update.apply(p, m, v, update.trustRatio(0.25, double(u) * u + 1.0));
    return p;
  }
  case 36: { // the decay, the signed step and the moment
    float p = 0.5f, m = 0.1f;
    LionUpdate{1e-3f, 0.9, 0.99, 0.1}(p, x, m);
    return p + m;
  }
  case 37: { // momentum, centered (a variance held at 0 where x is 0), L2 decay
    float p = 0.5f, v = 0.2f, buffer = 0.1f, average = x == 0.0f ? 1.0f : 0.3f;
    RmspropUpdate{1e-3f, 0.01f, 0.99, 1e-8, 0.9, true}(p, x, v, buffer, average);
    return p + v + buffer + average;
  }
  case 38: { // from Keras's initial sum, with L2 decay
    float p = 0.5f, sum = 0.1f;
    AdagradUpdate{1e-2f, 0.01f, 1e-10}(p, x, sum);
    return p + sum;
  }
  case 39: return Erf{}.value(x);
  case 40: return Erf{}.derivative(x, y);
  }
  return 0;
}

/// The forward value a derivative reads.
float forward(int fn, float x) {
  switch (fn) {
  case 16: return Tanh{}.value(x);
  case 17: return Sigmoid{}.value(x);
  case 18: return Sqrt{}.value(x);
  case 19: return Rsqrt{}.value(x);
  default: return 0;
  }
}

__global__ void evaluateAll(int fn, const float *x, const float *y, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = evaluate(fn, x[i], y[i]);
}

double ulpAt(float r) {
  float a = std::fabs(r);
  return a >= 1.17549435e-38f ? std::nextafter(a, INFINITY) - a : 1.4e-45;
}

/// A transcendental's disagreement: CUDA's are within 2 ulp of the true
/// value, as glibc's are within 1, so the two agree within 3 ulp.
double spread(float v) { return 3 * ulpAt(v); }


/// Counts the f32 bit patterns [first, first + n) whose device conversion
/// to f16 differs from the integer rounding's.
__global__ void compareF16Conversion(uint64_t first, uint64_t n, unsigned long long *differ) {
  unsigned long long mine = 0;
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x) {
    float v = floatOf(uint32_t(first + i));
    mine += f32ToF16(v) != f32ToF16Bits(v);
  }
  if (mine)
    atomicAdd(differ, mine);
}

/// Every f32 through both conversions: they must give the same bits.
bool conversionAgrees() {
  unsigned long long *differ, count = 0;
  cudaMalloc(&differ, sizeof(count));
  cudaMemset(differ, 0, sizeof(count));
  compareF16Conversion<<<4096, 256>>>(0, uint64_t(1) << 32, differ);
  cudaError_t status = cudaMemcpy(&count, differ, sizeof(count), cudaMemcpyDeviceToHost);
  cudaFree(differ);
  bool ok = status == cudaSuccess && count == 0;
  const char *error = status == cudaSuccess ? "" : cudaGetErrorString(status);
  std::printf("%-16s %s: %llu of 4294967296 inputs differ %s\n", "f32 to f16",
              ok ? "ok  " : "FAIL", count, error);
  return ok;
}

} // namespace

int main() {
  int devices = 0;
  cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device (%s)\n",
                status != cudaSuccess ? cudaGetErrorString(status) : "none found");
    return 77;
  }
  std::vector<float> x;
  for (uint32_t h = 0; h < 65536; ++h)
    if (((h >> 10) & 0x1F) != 0x1F)
      x.push_back(f16ToF32(uint16_t(h)));
  int n = (int)x.size();
  float *dx, *dy, *dout;
  cudaMalloc(&dx, n * 4);
  cudaMalloc(&dy, n * 4);
  cudaMalloc(&dout, n * 4);
  cudaMemcpy(dx, x.data(), n * 4, cudaMemcpyHostToDevice);
  bool ok = conversionAgrees();
  std::vector<float> y(n), gpu(n);
  for (int fn = 0; fn < kCount; ++fn) {
    for (int i = 0; i < n; ++i)
      y[i] = forward(fn, x[i]);
    cudaMemcpy(dy, y.data(), n * 4, cudaMemcpyHostToDevice);
    evaluateAll<<<(n + 255) / 256, 256>>>(fn, dx, dy, dout, n);
    if ((status = cudaMemcpy(gpu.data(), dout, n * 4, cudaMemcpyDeviceToHost)) != cudaSuccess) {
      std::printf("%s: %s\n", kFunctions[fn].name, cudaGetErrorString(status));
      return 1;
    }
    int differ = 0;
    double worst = 0, worstShare = 0;
    for (int i = 0; i < n; ++i) {
      float host = evaluate(fn, x[i], y[i]);
      if (std::memcmp(&host, &gpu[i], 4) == 0 || (host != host && gpu[i] != gpu[i]))
        continue;
      ++differ;
      double off = std::fabs(double(host) - gpu[i]);
      if (std::isfinite(host) && std::isfinite(gpu[i])) {
        worst = std::max(worst, off / ulpAt(host));
        worstShare = std::max(worstShare, off / spread(host));
      } else {
        worst = worstShare = INFINITY;
      }
    }
    bool pass = kFunctions[fn].exact ? differ == 0 : worstShare <= 1;
    ok &= pass;
    std::printf("%-16s %s: %d of %d inputs differ, worst %.1f ulp", kFunctions[fn].name,
                pass ? "ok  " : "FAIL", differ, n, worst);
    if (!kFunctions[fn].exact && differ)
      std::printf(" (%.3g of the allowance)", worstShare);
    std::printf("\n");
  }
  cudaFree(dx);
  cudaFree(dy);
  cudaFree(dout);
  return ok ? 0 : 1;
}
