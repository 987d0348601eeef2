// CPU kernels against f64 references, in f32, f16 and bf16: inputs are
// exactly representable in the dtype, the kernel computes in f32 and rounds
// its output once, so results agree with f64 to about one output ulp.
#include <cmath>

#include "runtime/numerics/Exp.h"
#include "tests/unit/KernelFixture.h"
#include "tests/unit/RuntimeTestUtil.h"
#include "tests/unit/TestUtil.h"

using namespace ampc;
using namespace ampc::test;

namespace {

using Vec = std::vector<double>;

class Kernels : public KernelsInDtypes {};

Vec matmulRef(const Vec &a, const Vec &b, int64_t batch, int64_t m, int64_t k, int64_t n,
              bool ta, bool tb, bool batchB) {
  Vec out(batch * m * n, 0.0);
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t q = 0; q < k; ++q) {
          double av = a[p * m * k + (ta ? q * m + i : i * k + q)];
          int64_t bo = batchB ? p * k * n : 0;
          double bv = b[bo + (tb ? j * k + q : q * n + j)];
          s += av * bv;
        }
        out[(p * m + i) * n + j] = s;
      }
  return out;
}

TEST_P(Kernels, Matmul) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      SCOPED_TRACE(std::to_string(ta) + std::to_string(tb));
      Vec a = randomValues(2 * 3 * 5, dt(), 1), b = randomValues(2 * 5 * 4, dt(), 2);
      auto c = compile([&](GraphBuilder &g) {
        Tensor x = g.input("a", ta ? std::vector<int64_t>{2, 5, 3} : std::vector<int64_t>{2, 3, 5}, dt());
        Tensor y = g.input("b", tb ? std::vector<int64_t>{2, 4, 5} : std::vector<int64_t>{2, 5, 4}, dt());
        g.output(g.matmul(x, y, ta, tb, "mm"));
      });
      c.set("a", a);
      c.set("b", b);
      c.ex->run();
      expectClose(c.get("mm"), matmulRef(a, b, 2, 3, 5, 4, ta, tb, true));
    }
}

TEST_P(Kernels, MatmulFoldsBatchIntoRowsAndBroadcasts) {
  Vec a = randomValues(2 * 3 * 5, dt(), 3), b = randomValues(5 * 4, dt(), 4);
  auto c = compile([&](GraphBuilder &g) {
    Tensor x = g.input("a", {2, 3, 5}, dt());
    Tensor w = g.input("b", {5, 4}, dt());
    Tensor w3 = g.input("b3", {1, 5, 4}, dt());
    g.output(g.matmul(x, w, false, false, "fold"));
    g.output(g.matmul(x, w3, false, false, "bcast"));
  });
  c.set("a", a);
  c.set("b", b);
  c.set("b3", b);
  c.ex->run();
  Vec want = matmulRef(a, b, 2, 3, 5, 4, false, false, false);
  expectClose(c.get("fold"), want);
  expectClose(c.get("bcast"), want);
}

/// NHWC reference: x [N,H,W,C], f [Cout,KH,KW,C/g].
Vec convRef(const Vec &x, const Vec &f, int64_t n, int64_t h, int64_t w, int64_t cin,
            int64_t cout, int64_t kh, int64_t kw, int64_t s, int64_t p, int64_t d, int64_t groups,
            int64_t oh, int64_t ow) {
  Vec out(n * oh * ow * cout, 0.0);
  int64_t cg = cin / groups, og = cout / groups;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t xo = 0; xo < ow; ++xo)
        for (int64_t o = 0; o < cout; ++o) {
          int64_t g = o / og;
          double sum = 0;
          for (int64_t ky = 0; ky < kh; ++ky)
            for (int64_t kx = 0; kx < kw; ++kx)
              for (int64_t ci = 0; ci < cg; ++ci) {
                int64_t iy = y * s - p + ky * d, ix = xo * s - p + kx * d;
                if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                  continue;
                sum += x[((b * h + iy) * w + ix) * cin + g * cg + ci] *
                       f[((o * kh + ky) * kw + kx) * cg + ci];
              }
          out[((b * oh + y) * ow + xo) * cout + o] = sum;
        }
  return out;
}

TEST_P(Kernels, Conv2dNhwcWithStridePaddingDilationGroups) {
  struct Case { int64_t s, p, d, groups; };
  for (Case k : {Case{1, 0, 1, 1}, Case{2, 1, 1, 1}, Case{1, 2, 2, 1}, Case{1, 1, 1, 2}}) {
    SCOPED_TRACE(std::to_string(k.s) + std::to_string(k.p) + std::to_string(k.d) +
                 std::to_string(k.groups));
    int64_t n = 2, h = 7, w = 6, cin = 4, cout = 6, kh = 3, kw = 3;
    int64_t oh = (h + 2 * k.p - k.d * (kh - 1) - 1) / k.s + 1;
    int64_t ow = (w + 2 * k.p - k.d * (kw - 1) - 1) / k.s + 1;
    Vec x = randomValues(n * h * w * cin, dt(), 5),
        f = randomValues(cout * kh * kw * (cin / k.groups), dt(), 6);
    auto c = compile([&](GraphBuilder &g) {
      Tensor xi = g.input("x", {n, h, w, cin}, dt());
      Tensor fi = g.input("f", {cout, kh, kw, cin / k.groups}, dt());
      Conv2dAttrs a;
      a.strides = {k.s, k.s};
      a.padding = {k.p, k.p};
      a.dilations = {k.d, k.d};
      a.groups = k.groups;
      g.output(g.conv2d(xi, fi, a, "conv"));
    });
    c.set("x", x);
    c.set("f", f);
    c.ex->run();
    expectClose(c.get("conv"),
                convRef(x, f, n, h, w, cin, cout, kh, kw, k.s, k.p, k.d, k.groups, oh, ow));
  }
}

TEST_P(Kernels, Conv2dNchwMatchesNhwc) {
  int64_t n = 1, h = 5, w = 5, cin = 2, cout = 3;
  Vec x = randomValues(n * h * w * cin, dt(), 7), f = randomValues(cout * 9 * cin, dt(), 8);
  // NCHW copies of the NHWC data.
  Vec xc(x.size()), fc(f.size());
  for (int64_t y = 0; y < h; ++y)
    for (int64_t z = 0; z < w; ++z)
      for (int64_t ch = 0; ch < cin; ++ch)
        xc[(ch * h + y) * w + z] = x[(y * w + z) * cin + ch];
  for (int64_t o = 0; o < cout; ++o)
    for (int64_t ky = 0; ky < 3; ++ky)
      for (int64_t kx = 0; kx < 3; ++kx)
        for (int64_t ch = 0; ch < cin; ++ch)
          fc[((o * cin + ch) * 3 + ky) * 3 + kx] = f[((o * 3 + ky) * 3 + kx) * cin + ch];
  auto c = compile([&](GraphBuilder &g) {
    Conv2dAttrs a;
    a.layout = "NCHW";
    a.padding = {1, 1};
    g.output(g.conv2d(g.input("x", {n, cin, h, w}, dt()), g.input("f", {cout, cin, 3, 3}, dt()),
                      a, "conv"));
  });
  c.set("x", xc);
  c.set("f", fc);
  c.ex->run();
  Vec nhwc = convRef(x, f, n, h, w, cin, cout, 3, 3, 1, 1, 1, 1, h, w), want(nhwc.size());
  for (int64_t y = 0; y < h; ++y)
    for (int64_t z = 0; z < w; ++z)
      for (int64_t o = 0; o < cout; ++o)
        want[(o * h + y) * w + z] = nhwc[(y * w + z) * cout + o];
  expectClose(c.get("conv"), want);
}

TEST_P(Kernels, Pooling) {
  int64_t h = 5, w = 4, ch = 3;
  Vec x = randomValues(h * w * ch, dt(), 9);
  auto c = compile([&](GraphBuilder &g) {
    Tensor xi = g.input("x", {1, h, w, ch}, dt());
    Pool2dAttrs p;
    p.kernel = {3, 3};
    p.strides = {2, 2};
    p.padding = {1, 1};
    g.output(g.maxPool2d(xi, p, "max"));
    g.output(g.avgPool2d(xi, p, "avg"));
    g.output(g.globalAvgPool(xi, "NHWC", "gap"));
  });
  c.set("x", x);
  c.ex->run();
  int64_t oh = 3, ow = 2;
  Vec mx(oh * ow * ch), av(oh * ow * ch), gap(ch, 0.0);
  for (int64_t y = 0; y < oh; ++y)
    for (int64_t z = 0; z < ow; ++z)
      for (int64_t k = 0; k < ch; ++k) {
        double best = -INFINITY, sum = 0;
        int count = 0;
        for (int64_t dy = 0; dy < 3; ++dy)
          for (int64_t dz = 0; dz < 3; ++dz) {
            int64_t iy = y * 2 - 1 + dy, iz = z * 2 - 1 + dz;
            if (iy < 0 || iy >= h || iz < 0 || iz >= w)
              continue;
            double v = x[(iy * w + iz) * ch + k];
            best = std::max(best, v);
            sum += v;
            ++count;
          }
        mx[(y * ow + z) * ch + k] = best;
        av[(y * ow + z) * ch + k] = sum / count;
      }
  for (int64_t i = 0; i < h * w; ++i)
    for (int64_t k = 0; k < ch; ++k)
      gap[k] += x[i * ch + k] / (h * w);
  expectClose(c.get("max"), mx);
  expectClose(c.get("avg"), av);
  expectClose(c.get("gap"), gap);
}

TEST_P(Kernels, ElementwiseWithBroadcasting) {
  Vec a = randomValues(2 * 1 * 3, dt(), 10), b = randomValues(4 * 1, dt(), 11);
  auto c = compile([&](GraphBuilder &g) {
    Tensor x = g.input("a", {2, 1, 3}, dt()), y = g.input("b", {4, 1}, dt());
    g.output(g.add(x, y, "add"));
    g.output(g.sub(x, y, "sub"));
    g.output(g.mul(x, y, "mul"));
    g.output(g.div(x, y, "div"));
    g.output(g.maximum(x, y, "max"));
    g.output(g.minimum(x, y, "min"));
  });
  c.set("a", a);
  c.set("b", b);
  c.ex->run();
  auto ref = [&](auto op) {
    Vec out;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 4; ++j)
        for (int64_t k = 0; k < 3; ++k)
          out.push_back(op(a[i * 3 + k], b[j]));
    return out;
  };
  expectClose(c.get("add"), ref([](double x, double y) { return x + y; }));
  expectClose(c.get("sub"), ref([](double x, double y) { return x - y; }));
  expectClose(c.get("mul"), ref([](double x, double y) { return x * y; }));
  expectClose(c.get("div"), ref([](double x, double y) { return x / y; }));
  expectClose(c.get("max"), ref([](double x, double y) { return std::max(x, y); }));
  expectClose(c.get("min"), ref([](double x, double y) { return std::min(x, y); }));
}

TEST_P(Kernels, UnaryMathAndActivations) {
  Vec x = randomValues(64, dt(), 12), pos(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    pos[i] = std::fabs(x[i]) + 0.25;
  auto c = compile([&](GraphBuilder &g) {
    Tensor xi = g.input("x", {64}, dt()), pi = g.input("p", {64}, dt());
    for (const char *op : {"neg", "abs", "relu", "tanh", "sigmoid", "erf", "exp", "square",
                           "sin", "cos"})
      g.output(g.unary(op, xi, op));
    for (const char *op : {"log", "sqrt", "rsqrt"})
      g.output(g.unary(op, pi, op));
    g.output(g.gelu(xi, false, "gelu"));
    g.output(g.gelu(xi, true, "gelu_tanh"));
    g.output(g.pow(pi, 1.5, "pow"));
    g.output(g.scale(xi, 3.0, -0.5, "scale"));
    g.output(g.dropout(xi, 0.3, 1, "dropout"));
  });
  c.set("x", x);
  c.set("p", pos);
  c.ex->run();
  auto map = [](const Vec &in, auto f) {
    Vec out;
    for (double v : in)
      out.push_back(f(v));
    return out;
  };
  expectClose(c.get("neg"), map(x, [](double v) { return -v; }));
  expectClose(c.get("abs"), map(x, [](double v) { return std::fabs(v); }));
  expectClose(c.get("relu"), map(x, [](double v) { return v > 0 ? v : 0; }));
  expectClose(c.get("tanh"), map(x, [](double v) { return std::tanh(v); }));
  expectClose(c.get("sigmoid"), map(x, [](double v) { return 1 / (1 + std::exp(-v)); }));
  expectClose(c.get("erf"), map(x, [](double v) { return std::erf(v); }));
  expectClose(c.get("exp"), map(x, [](double v) { return std::exp(v); }));
  expectClose(c.get("square"), map(x, [](double v) { return v * v; }));
  expectClose(c.get("sin"), map(x, [](double v) { return std::sin(v); }));
  expectClose(c.get("cos"), map(x, [](double v) { return std::cos(v); }));
  expectClose(c.get("log"), map(pos, [](double v) { return std::log(v); }));
  expectClose(c.get("sqrt"), map(pos, [](double v) { return std::sqrt(v); }));
  expectClose(c.get("rsqrt"), map(pos, [](double v) { return 1 / std::sqrt(v); }));
  expectClose(c.get("gelu"), map(x, [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }));
  expectClose(c.get("gelu_tanh"), map(x, [](double v) {
                return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
              }));
  expectClose(c.get("pow"), map(pos, [](double v) { return std::pow(v, 1.5); }));
  expectClose(c.get("scale"), map(x, [](double v) { return 3 * v - 0.5; }));
  expectClose(c.get("dropout"), x); // inference: identity
}

TEST_P(Kernels, NormalisationsSoftmaxReductions) {
  Vec x = randomValues(2 * 3 * 4, dt(), 13), s = randomValues(4, dt(), 14),
      b = randomValues(4, dt(), 15);
  Vec var = randomValues(4, dt(), 16);
  for (double &v : var)
    v = std::fabs(v) + 0.5;
  auto c = compile([&](GraphBuilder &g) {
    Tensor xi = g.input("x", {2, 3, 4}, dt());
    Tensor si = g.input("s", {4}, dt()), bi = g.input("b", {4}, dt());
    Tensor s32 = g.input("s32", {4}), b32 = g.input("b32", {4}), m32 = g.input("m32", {4}),
           v32 = g.input("v32", {4});
    g.output(g.layerNorm(xi, si, bi, 1e-5, -1, "ln"));
    g.output(g.batchNorm(xi, s32, b32, m32, v32, 1e-5, 0.9, "NHWC", "bn"));
    g.output(g.softmax(xi, 1, "softmax"));
    g.output(g.logSoftmax(xi, -1, "log_softmax"));
    g.output(g.reduceSum(xi, {0, 2}, true, "sum"));
    g.output(g.reduceMean(xi, {}, false, "mean"));
  });
  for (const char *name : {"x", "s", "b"})
    c.set(name, name[0] == 'x' ? x : name[0] == 's' ? s : b);
  c.set("s32", s);
  c.set("b32", b);
  c.set("m32", b);
  c.set("v32", var);
  c.ex->run();
  Vec ln(24), bn(24), sm(24), lsm(24), sum(3, 0.0), mean(1, 0.0);
  for (int64_t r = 0; r < 6; ++r) {
    double mu = 0, v = 0, mx = -INFINITY, z = 0;
    for (int64_t k = 0; k < 4; ++k)
      mu += x[r * 4 + k] / 4, mx = std::max(mx, x[r * 4 + k]);
    for (int64_t k = 0; k < 4; ++k)
      v += (x[r * 4 + k] - mu) * (x[r * 4 + k] - mu) / 4, z += std::exp(x[r * 4 + k] - mx);
    for (int64_t k = 0; k < 4; ++k) {
      double xv = x[r * 4 + k];
      ln[r * 4 + k] = (xv - mu) / std::sqrt(v + 1e-5) * s[k] + b[k];
      bn[r * 4 + k] = (xv - b[k]) / std::sqrt(var[k] + 1e-5) * s[k] + b[k];
      lsm[r * 4 + k] = xv - mx - std::log(z);
      sum[r % 3] += xv;
      mean[0] += xv / 24;
    }
  }
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t k = 0; k < 4; ++k) {
      double mx = -INFINITY, z = 0;
      for (int64_t j = 0; j < 3; ++j)
        mx = std::max(mx, x[(i * 3 + j) * 4 + k]);
      for (int64_t j = 0; j < 3; ++j)
        z += std::exp(x[(i * 3 + j) * 4 + k] - mx);
      for (int64_t j = 0; j < 3; ++j)
        sm[(i * 3 + j) * 4 + k] = std::exp(x[(i * 3 + j) * 4 + k] - mx) / z;
    }
  expectClose(c.get("ln"), ln);
  expectClose(c.get("bn"), bn);
  expectClose(c.get("softmax"), sm);
  expectClose(c.get("log_softmax"), lsm);
  expectClose(c.get("sum"), sum);
  expectClose(c.get("mean"), mean);
}

TEST_P(Kernels, LossesAndLookup) {
  Vec logits = randomValues(3 * 5, dt(), 17), target = randomValues(3 * 5, dt(), 18);
  Vec table = randomValues(6 * 4, dt(), 19);
  Vec labels = {4, 0, 2}, ids = {5, 0, 5, 3};
  auto c = compile([&](GraphBuilder &g) {
    Tensor l = g.input("logits", {3, 5}, dt()), t = g.input("target", {3, 5}, dt());
    Tensor lab = g.input("labels", {3}, "i64"), id = g.input("ids", {2, 2}, "i32");
    g.output(g.softmaxCrossEntropy(l, lab, "xent"));
    g.output(g.mseLoss(l, t, "mse"));
    g.output(g.embedding(id, g.input("table", {6, 4}, dt()), "emb"));
  });
  c.set("logits", logits);
  c.set("target", target);
  c.set("labels", labels);
  c.set("ids", ids);
  c.set("table", table);
  c.ex->run();
  double xent = 0, mse = 0;
  for (int64_t r = 0; r < 3; ++r) {
    double mx = -INFINITY, z = 0;
    for (int64_t k = 0; k < 5; ++k)
      mx = std::max(mx, logits[r * 5 + k]);
    for (int64_t k = 0; k < 5; ++k)
      z += std::exp(logits[r * 5 + k] - mx);
    xent += (std::log(z) + mx - logits[r * 5 + (int)labels[r]]) / 3;
  }
  for (size_t i = 0; i < logits.size(); ++i)
    mse += (logits[i] - target[i]) * (logits[i] - target[i]) / logits.size();
  Vec emb;
  for (double id : ids)
    for (int64_t k = 0; k < 4; ++k)
      emb.push_back(table[(int)id * 4 + k]);
  expectClose(c.get("xent"), {xent});
  expectClose(c.get("mse"), {mse});
  expectClose(c.get("emb"), emb);
}

TEST_P(Kernels, DataMovement) {
  Vec x = randomValues(2 * 3 * 4, dt(), 20);
  auto c = compile([&](GraphBuilder &g) {
    Tensor xi = g.input("x", {2, 3, 4}, dt());
    g.output(g.transpose(xi, {2, 0, 1}, "tr"));
    g.output(g.concat({xi, xi}, 1, "cat"));
    g.output(g.slice(xi, {2, 1}, {1, -2}, {3, 100}, "sl"));
    g.output(g.reshape(xi, {4, 6}, "rs"));
    g.output(g.cast(xi, "f32", "c32"));
  });
  c.set("x", x);
  c.ex->run();
  Vec tr, cat, sl;
  for (int64_t k = 0; k < 4; ++k)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j)
        tr.push_back(x[(i * 3 + j) * 4 + k]);
  for (int64_t i = 0; i < 2; ++i)
    for (int rep = 0; rep < 2; ++rep)
      for (int64_t j = 0; j < 12; ++j)
        cat.push_back(x[i * 12 + j]);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 1; j < 3; ++j)
      for (int64_t k = 1; k < 3; ++k)
        sl.push_back(x[(i * 3 + j) * 4 + k]);
  expectClose(c.get("tr"), tr);
  expectClose(c.get("cat"), cat);
  expectClose(c.get("sl"), sl);
  expectClose(c.get("rs"), x);
  expectClose(c.get("c32"), x);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, Kernels, ::testing::Values("f32", "f16", "bf16"),
                         [](const auto &info) { return info.param; });

TEST(KernelErrors, OutOfRangeIdsAndLabelsNameTheStep) {
  auto c = compile([](GraphBuilder &g) {
    g.output(g.embedding(g.input("ids", {2}, "i64"), g.input("table", {3, 2}), "emb"));
  });
  c.set("ids", {1, 7});
  try {
    c.ex->run();
    FAIL() << "expected an error";
  } catch (const rt::RuntimeError &e) {
    EXPECT_STREQ(e.what(), "step 'emb' (embedding): id 7 is out of range [0, 3)");
  }
}

TEST(KernelErrors, CastRoundsToNearestEvenAndOverflowsToInf) {
  auto c = compile([](GraphBuilder &g) {
    Tensor x = g.input("x", {4});
    g.output(g.cast(x, "f16", "h"));
    g.output(g.cast(x, "bf16", "b"));
    g.output(g.cast(x, "i32", "i"));
  });
  c.set("x", {65504, 65520, 2049, -3.75});
  c.ex->run();
  Vec h = c.get("h");
  EXPECT_EQ(h[0], 65504);
  EXPECT_TRUE(std::isinf(h[1]));
  EXPECT_EQ(h[2], 2048);
  EXPECT_EQ(c.get("b")[2], 2048);
  EXPECT_EQ(c.get("i")[3], -3);
}

} // namespace
