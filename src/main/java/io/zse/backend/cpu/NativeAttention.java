package io.zse.backend.cpu;

import io.zse.backend.AttentionShape;
import io.zse.backend.BatchLayout;
import io.zse.backend.F16KvRows;
import io.zse.backend.F32KvRows;
import io.zse.backend.Int8KvRows;
import io.zse.backend.KvRows;

import java.lang.foreign.MemorySegment;

/**
 * {@link io.zse.backend.Backend#attention} through zse_cpu_attention_head: one native call per (row, query head), the
 * pairs split over the worker threads as {@link CpuAttention} splits them. Every slot of every block table is checked
 * against the cache's rows here, once per call, so the C side reads only inside the KV pool.
 */
final class NativeAttention {
    private static final int KV_F32 = 0;
    private static final int KV_F16 = 1;
    private static final int KV_INT8 = 2;

    private NativeAttention() {
    }

    /** One sequence's cached rows of a layer, as the C function takes them. */
    private record Rows(int type, MemorySegment keys, MemorySegment values, MemorySegment keyScales,
                        MemorySegment valueScales, MemorySegment slots) {
    }

    static void attend(NativeCpuLibrary library, MemorySegment q, BatchLayout batch, int layer, AttentionShape shape,
                       MemorySegment out, CpuThreads threads) {
        int headDim = shape.headDim();
        int queryDim = shape.queryDim();
        int numHeads = shape.numHeads();
        int numKvHeads = shape.numKvHeads();
        int headsPerKv = numHeads / numKvHeads;
        NativeKernels.requireFloats(q, (long) batch.rows() * queryDim, "queries");
        NativeKernels.requireFloats(out, (long) batch.rows() * queryDim, "attention output");
        Rows[] rows = new Rows[batch.segments().size()];
        for (int s = 0; s < rows.length; s++) {
            BatchLayout.Segment segment = batch.segments().get(s);
            rows[s] = rows(segment.cache().keys(layer), segment.cache().values(layer), batch.slots(s), shape);
        }
        int maxEnd = batch.maxEnd();
        long workPerItem = (long) maxEnd * headDim * 2;
        threads.parallelFor(batch.rows() * numHeads, workPerItem, (start, end) -> {
            MemorySegment scores = MemorySegment.ofArray(new float[maxEnd]);
            for (int item = start; item < end; item++) {
                int i = item / numHeads;
                int head = item % numHeads;
                Rows r = rows[batch.segmentIndex(i)];
                int position = batch.position(i);
                long qOffset = ((long) i * queryDim + (long) head * headDim) * Float.BYTES;
                library.attentionHead(q.asSlice(qOffset), headDim, r.type(), r.keys(), r.values(), r.keyScales(),
                        r.valueScales(), shape.kvDim(), head / headsPerKv, numKvHeads, r.slots(),
                        shape.firstVisible(position), position, shape.scale(), shape.softCap(), scores,
                        out.asSlice(qOffset));
            }
        });
    }

    private static Rows rows(KvRows keys, KvRows values, int[] slots, AttentionShape shape) {
        // the kv heads were checked on the pool (CpuBackend.attention); the width guards the native reads here
        if (keys.getClass() != values.getClass() || keys.kvDim() != shape.kvDim() || values.kvDim() != shape.kvDim()
                || keys.slots() != values.slots()) {
            throw new IllegalArgumentException("keys " + keys + " and values " + values + " do not fit attention "
                    + shape);
        }
        for (int slot : slots) {
            if (slot < 0 || slot >= keys.slots()) {
                throw new IllegalStateException("block table slot " + slot + " outside the cache's " + keys.slots()
                        + " rows");
            }
        }
        MemorySegment table = MemorySegment.ofArray(slots);
        return switch (keys) {
            case F32KvRows k -> new Rows(KV_F32, k.data(), ((F32KvRows) values).data(), MemorySegment.NULL,
                    MemorySegment.NULL, table);
            case F16KvRows k -> new Rows(KV_F16, k.data(), ((F16KvRows) values).data(), MemorySegment.NULL,
                    MemorySegment.NULL, table);
            case Int8KvRows k -> new Rows(KV_INT8, k.codes(), ((Int8KvRows) values).codes(), k.scales(),
                    ((Int8KvRows) values).scales(), table);
        };
    }
}
