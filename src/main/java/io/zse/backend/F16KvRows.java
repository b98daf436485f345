package io.zse.backend;

/** Rows stored as IEEE binary16 bit patterns: data[position * kvDim + kvHead * headDim + i]. */
public final class F16KvRows implements KvRows {
    private final int kvDim;
    private final short[] data;

    F16KvRows(int capacity, int kvDim) {
        this.kvDim = kvDim;
        this.data = new short[Math.multiplyExact(capacity, kvDim)];
    }

    @Override
    public int kvDim() {
        return kvDim;
    }

    /** [capacity, kvDim] binary16 bit patterns, read in place by the attention kernels. */
    public short[] data() {
        return data;
    }

    @Override
    public void write(int position, float[] source, int sourceOffset) {
        int base = position * kvDim;
        for (int i = 0; i < kvDim; i++) {
            data[base + i] = Float.floatToFloat16(source[sourceOffset + i]);
        }
    }

    @Override
    public void read(int position, float[] out, int offset) {
        int base = position * kvDim;
        for (int i = 0; i < kvDim; i++) {
            out[offset + i] = Float.float16ToFloat(data[base + i]);
        }
    }

    @Override
    public int bytesPerPosition() {
        return kvDim * Short.BYTES;
    }
}
