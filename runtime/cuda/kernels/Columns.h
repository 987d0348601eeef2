// Work down the columns of a [rows, cols] matrix: channels-last batch norm
// (rows of pixels, a column per channel), layer norm's scale gradient and
// bias gradients (a column per feature).
//
// A lane takes `per` consecutive columns (1, or 4 where every operand can be
// read a quad at a time: Quads.h), a unit. A block of kThreads lanes takes
// `width` consecutive units (the units rounded up to a power of two, at most
// a warp) and one chunk of rows; its lanes stack kThreads / width deep on the
// rows, so a warp reads whole runs of consecutive columns and no lane divides
// to find its element. (Batch norm's f16 channels a lane at a time had a warp
// read 64 bytes a load, one row after another.) The chunks
// depend only on the shape, so the sums are the same bits on every run:
//   columnSums: each lane sums its rows of the chunk in order (in f32 runs
//     of kRunRows rows added into double, where the terms are f32), the block
//     adds its lanes in order (one partial per chunk and column), then a
//     warp per column adds the chunks' partials in a fixed tree and hands
//     the totals to the caller's functor (its statistics, in the same
//     launch);
//   eachInColumns: a functor's element pass, each lane loading kUnroll rows
//     before it stores any (unrolledStride).
// The order differs from the CPU's sequential sums, so these agree with the
// CPU within the Accumulated tolerance (runtime/core/KernelTraits.h).
#ifndef AMPC_RUNTIME_CUDA_COLUMNS_H
#define AMPC_RUNTIME_CUDA_COLUMNS_H

#include <type_traits>

#include "runtime/cuda/kernels/Quads.h"
#include "runtime/cuda/kernels/Rows.h"

namespace ampc::rt::cuda::rows {

struct Columns {
  int64_t rows, cols, rowsPerChunk, chunks;
  int width; // consecutive units a block takes
  int per;   // consecutive columns a lane takes (a unit): 1, or kQuad
  __host__ __device__ int depth() const { return kThreads / width; }
  __host__ __device__ int64_t units() const { return cols / per; }
  __host__ __device__ int64_t columnBlocks() const { return (units() + width - 1) / width; }
};

/// The tiling of a [rows, cols] matrix, `per` columns a lane (cols a
/// multiple of per).
inline Columns columnsOf(int64_t rows, int64_t cols, int per = 1) {
  int64_t units = cols / per;
  int width = 1;
  while (width < kWarp && width < units)
    width *= 2;
  int64_t depth = kThreads / width, blocks = (units + width - 1) / width;
  // About 2048 blocks (a few waves of an H100), at least 4 rows a lane,
  // and grid.y within 65535.
  int64_t perChunk = std::max<int64_t>(4 * depth, (rows * blocks + 2047) / 2048);
  perChunk = std::max<int64_t>(perChunk, (rows + 65534) / 65535);
  return {rows, cols, perChunk, std::max<int64_t>(1, (rows + perChunk - 1) / perChunk), width,
          per};
}

/// Columns a lane takes (Columns::per) in a pass over `operands` (Views, or
/// anything with `data` and `dtype`): a quad where the columns divide into
/// quads and every operand can be read a quad at a time.
template <typename Operand>
int columnsPerLane(int64_t cols, std::initializer_list<Operand> operands) {
  return cols % kQuad == 0 && quadsFit(operands) ? kQuad : 1;
}

/// Lane `lane` of block (x, y): its unit's first column, its first row in
/// the block's chunk, and the chunk's end (it takes every depth()-th row).
struct ColumnLane {
  int64_t col, row, end;
  __host__ __device__ ColumnLane(const Columns &m, int64_t x, int64_t y, int lane) {
    col = (x * m.width + lane % m.width) * m.per;
    row = y * m.rowsPerChunk + lane / m.width;
    end = (y + 1) * m.rowsPerChunk < m.rows ? (y + 1) * m.rowsPerChunk : m.rows;
  }
  __device__ explicit ColumnLane(const Columns &m)
      : ColumnLane(m, blockIdx.x, blockIdx.y, threadIdx.x) {}
};

/// Rows a lane sums in f32 before it adds them to its double sums, where
/// its column's terms are f32 (Column::Run): a conversion to double is a
/// quarter of an f32 operation's rate on sm_80 and sm_90, and batch norm's
/// sums spent more issue slots on them than memory allowed (docs/cuda.md,
/// "Column sums"). A run of 16 f32 terms is off by at most about 2^-20 of
/// the sum of their magnitudes.
constexpr int kRunRows = 16;

/// The type a Column's terms are summed in along a lane's rows: its `Run`,
/// else double.
template <typename C, typename = void> struct RunOf {
  using type = double;
};
template <typename C> struct RunOf<C, std::void_t<typename C::Run>> {
  using type = typename C::Run;
};

/// acc[w * N + i]: term i of the unit's column w.
template <int N, int P, typename Term>
__global__ void columnChunks(Columns m, Term term, double *partials) {
  __shared__ double lanes[N * P][kThreads];
  ColumnLane at(m);
  double acc[N * P] = {};
  if (at.col < m.cols) {
    auto column = term.column(at.col);
    using Run = typename RunOf<decltype(column)>::type;
    if constexpr (std::is_same_v<Run, double>) {
#pragma unroll 4
      for (int64_t row = at.row; row < at.end; row += m.depth())
        column(row, acc);
    } else {
      for (int64_t row = at.row; row < at.end;) {
        Run run[N * P] = {};
        int64_t stop = row + (int64_t)kRunRows * m.depth();
        stop = stop < at.end ? stop : at.end;
#pragma unroll 4
        for (; row < stop; row += m.depth())
          column(row, run);
#pragma unroll
        for (int i = 0; i < N * P; ++i)
          acc[i] += run[i];
      }
    }
  }
  for (int i = 0; i < N * P; ++i)
    lanes[i][threadIdx.x] = acc[i];
  __syncthreads();
  if (threadIdx.x < m.width && at.col < m.cols) {
    for (int i = 0; i < N * P; ++i) {
      double sum = 0;
      for (int k = 0; k < m.depth(); ++k)
        sum += lanes[i][k * m.width + threadIdx.x];
      partials[(i % N * m.chunks + blockIdx.y) * m.cols + at.col + i / N] = sum;
    }
  }
}

/// One warp per column: for each term, lane l adds chunks l, l + 32, ...
/// in order, then the warp adds its lanes in a fixed tree; lane 0 passes
/// the column's N totals to `finish`.
template <int N, typename Finish>
__global__ void columnTotals(Columns m, const double *partials, Finish finish) {
  AMPC_ROW_STRIDE(col, m.cols) {
    double totals[N];
#pragma unroll
    for (int i = 0; i < N; ++i) {
      double sum = 0;
#pragma unroll 4
      for (int64_t chunk = lane(); chunk < m.chunks; chunk += kWarp)
        sum += partials[(i * m.chunks + chunk) * m.cols + col];
      totals[i] = warpSum(sum);
    }
    if (lane() == 0)
      finish(col, totals);
  }
}

/// Doubles of scratch that columnSums<N> needs for its partial sums.
template <int N> int64_t columnScratch(const Columns &m) { return N * m.chunks * m.cols; }

/// Queues the sums over rows of N terms of each column, and then
/// finish(col, totals) with totals[i] the sum of term i in column col.
/// `Term::column(col)` gives the functor of the unit from column col on (its
/// constants in registers), with `__device__ void operator()(int64_t row,
/// Run *acc) const` (Run: the Column's `Run`, float or, where it has none,
/// double) adding the N terms of each of its P (m.per) columns w in
/// row `row` to acc[w * N .. w * N + N); it only loads, so
/// the compiler may issue the loads of several rows ahead of their sums.
/// `Finish` has `__device__ void operator()(int64_t col, const double *totals)
/// const` (a column's statistics, or its sums stored). P is m.per.
template <int N, int P = 1, typename Term, typename Finish>
void columnSums(cudaStream_t stream, const Columns &m, Term term, double *partials,
                Finish finish) {
  dim3 grid((unsigned)m.columnBlocks(), (unsigned)m.chunks);
  columnChunks<N, P><<<grid, kThreads, 0, stream>>>(m, term, partials);
  columnTotals<N><<<blocksForRows(m.cols), kThreads, 0, stream>>>(m, partials, finish);
}

template <typename Pass> __global__ void columnElements(Columns m, Pass pass) {
  ColumnLane at(m);
  if (at.col >= m.cols)
    return;
  auto column = pass.column(at.col);
  unrolledStride(
      at.row, at.end, m.depth(), [&](int64_t row) { return column.load(row); },
      [&](int64_t row, const auto &v) { column.store(row, v); });
}

/// Queues an element pass over the matrix. `Pass::column(col)` gives the
/// pass of the unit from column col on, m.per columns (its constants in
/// registers), with
/// `__device__ Value load(int64_t row) const` and
/// `__device__ void store(int64_t row, const Value &) const`.
template <typename Pass> void eachInColumns(cudaStream_t stream, const Columns &m, Pass pass) {
  dim3 grid((unsigned)m.columnBlocks(), (unsigned)m.chunks);
  columnElements<<<grid, kThreads, 0, stream>>>(m, pass);
}

} // namespace ampc::rt::cuda::rows

#endif
