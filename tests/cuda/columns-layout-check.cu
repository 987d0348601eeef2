// The tiling of runtime/cuda/kernels/Columns.h, walked on the host (no GPU needed):
// for shapes from one row or column to ResNet-50's and BERT's, a column or
// four (a quad) a lane, every element of [rows, cols] is visited by exactly
// one lane, each block's
// reduction reads the lanes of its own columns, and the grid fits CUDA's
// limits. Exit 0: the layout holds; 1: it does not (the first fault named).
#include <cstdio>
#include <vector>

#include "runtime/cuda/kernels/Columns.h"

using namespace ampc::rt::cuda;

namespace {

bool layoutHolds(int64_t rows, int64_t cols, int per) {
  rows::Columns m = rows::columnsOf(rows, cols, per);
  auto fail = [&](const char *what) {
    std::printf("[%lld, %lld], %d a lane: %s\n", (long long)rows, (long long)cols, per, what);
    return false;
  };
  if (m.chunks > 65535 || m.chunks * m.rowsPerChunk < rows || m.width > rows::kWarp ||
      kThreads % m.width != 0)
    return fail("the grid does not cover the rows or exceeds CUDA's limits");
  std::vector<uint8_t> seen(rows * cols, 0);
  for (int64_t x = 0; x < m.columnBlocks(); ++x)
    for (int64_t y = 0; y < m.chunks; ++y)
      for (int lane = 0; lane < kThreads; ++lane) {
        rows::ColumnLane at(m, x, y, lane);
        // The block's reduction: lane t < width adds lanes k * width + t.
        if (lane < m.width)
          for (int k = 0; k < m.depth(); ++k)
            if (rows::ColumnLane(m, x, y, k * m.width + lane).col != at.col)
              return fail("a reduction reads another column's lane");
        if (at.col >= cols)
          continue;
        for (int64_t r = at.row; r < at.end; r += m.depth())
          for (int w = 0; w < per; ++w)
            if (++seen[r * cols + at.col + w] > 1)
              return fail("an element is visited twice");
      }
  for (uint8_t s : seen)
    if (s != 1)
      return fail("an element is not visited");
  return true;
}

} // namespace

int main() {
  const int64_t shapes[][2] = {{0, 8},       {1, 1},      {1, 40},      {7, 3},
                               {338, 3},     {98, 40},    {70, 15},     {4096, 768},
                               {3136, 2048}, {200000, 1}, {802816, 64}, {4097, 33},
                               {1, 4},       {7, 12},     {50176, 256}, {3136, 2052}};
  bool ok = true;
  for (const auto &s : shapes) {
    ok &= layoutHolds(s[0], s[1], 1);
    if (s[1] % 4 == 0)
      ok &= layoutHolds(s[0], s[1], 4);
  }
  std::printf("column layout: %s\n", ok ? "ok" : "FAIL");
  return ok ? 0 : 1;
}
