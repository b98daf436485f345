package io.zse.backend.cpu;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

import java.lang.foreign.MemorySegment;

import static io.zse.backend.cpu.HostActivations.FLOAT;

/**
 * The prefill micro-kernel: a tile of decoded F32 weight rows times every activation row. Blocks of 4 weight rows x
 * 2 activation rows keep 8 accumulators in registers, so each vector load feeds two multiply-adds (a plain dot
 * product loads two vectors per multiply-add and stalls on loads).
 */
final class TileProduct {
    private TileProduct() {
    }

    /**
     * out[i * outStride + firstRow + r] = Σ_k tile[r * cols + k] · x[i * cols + k] for r < tileRows, i < n.
     */
    static void multiply(MemorySegment tile, int tileRows, MemorySegment x, int n, int cols, MemorySegment out,
                         int outStride, int firstRow) {
        int vectorCols = Matmul.FLOATS.loopBound(cols);
        int r = 0;
        for (; r + 4 <= tileRows; r += 4) {
            int i = 0;
            for (; i + 2 <= n; i += 2) {
                block4x2(tile, r, x, i, cols, vectorCols, out, outStride, firstRow);
            }
            for (; i < n; i++) {
                for (int rr = r; rr < r + 4; rr++) {
                    out.setAtIndex(FLOAT, (long) i * outStride + firstRow + rr,
                            F32Matmul.dot(tile, (long) rr * cols, x, (long) i * cols, cols));
                }
            }
        }
        for (; r < tileRows; r++) {
            for (int i = 0; i < n; i++) {
                out.setAtIndex(FLOAT, (long) i * outStride + firstRow + r,
                        F32Matmul.dot(tile, (long) r * cols, x, (long) i * cols, cols));
            }
        }
    }

    private static void block4x2(MemorySegment tile, int r, MemorySegment x, int i, int cols, int vectorCols,
                                 MemorySegment out, int outStride, int firstRow) {
        var species = Matmul.FLOATS;
        long w0 = (long) r * cols;
        long w1 = w0 + cols;
        long w2 = w1 + cols;
        long w3 = w2 + cols;
        long x0 = (long) i * cols;
        long x1 = x0 + cols;
        FloatVector a00 = FloatVector.zero(species);
        FloatVector a01 = a00;
        FloatVector a10 = a00;
        FloatVector a11 = a00;
        FloatVector a20 = a00;
        FloatVector a21 = a00;
        FloatVector a30 = a00;
        FloatVector a31 = a00;
        int k = 0;
        for (; k < vectorCols; k += species.length()) {
            FloatVector xa = Matmul.floatsAt(x, x0 + k);
            FloatVector xb = Matmul.floatsAt(x, x1 + k);
            FloatVector w = Matmul.floatsAt(tile, w0 + k);
            a00 = w.fma(xa, a00);
            a01 = w.fma(xb, a01);
            w = Matmul.floatsAt(tile, w1 + k);
            a10 = w.fma(xa, a10);
            a11 = w.fma(xb, a11);
            w = Matmul.floatsAt(tile, w2 + k);
            a20 = w.fma(xa, a20);
            a21 = w.fma(xb, a21);
            w = Matmul.floatsAt(tile, w3 + k);
            a30 = w.fma(xa, a30);
            a31 = w.fma(xb, a31);
        }
        float[] sums = {
                a00.reduceLanes(VectorOperators.ADD), a01.reduceLanes(VectorOperators.ADD),
                a10.reduceLanes(VectorOperators.ADD), a11.reduceLanes(VectorOperators.ADD),
                a20.reduceLanes(VectorOperators.ADD), a21.reduceLanes(VectorOperators.ADD),
                a30.reduceLanes(VectorOperators.ADD), a31.reduceLanes(VectorOperators.ADD)};
        for (; k < cols; k++) { // the tail of a row whose length is not a multiple of the vector
            for (int rr = 0; rr < 4; rr++) {
                float w = tile.getAtIndex(FLOAT, w0 + (long) rr * cols + k);
                sums[2 * rr] += w * x.getAtIndex(FLOAT, x0 + k);
                sums[2 * rr + 1] += w * x.getAtIndex(FLOAT, x1 + k);
            }
        }
        for (int rr = 0; rr < 4; rr++) {
            out.setAtIndex(FLOAT, (long) i * outStride + firstRow + r + rr, sums[2 * rr]);
            out.setAtIndex(FLOAT, (long) (i + 1) * outStride + firstRow + r + rr, sums[2 * rr + 1]);
        }
    }
}
