package io.zse.backend;

/** Rows stored as F32: data[position * kvDim + kvHead * headDim + i]. */
public final class F32KvRows implements KvRows {
    private final int kvDim;
    private final float[] data;

    F32KvRows(int capacity, int kvDim) {
        this.kvDim = kvDim;
        this.data = new float[Math.multiplyExact(capacity, kvDim)];
    }

    @Override
    public int kvDim() {
        return kvDim;
    }

    /** [capacity, kvDim], read in place by the attention kernels. */
    public float[] data() {
        return data;
    }

    @Override
    public void write(int position, float[] source, int sourceOffset) {
        System.arraycopy(source, sourceOffset, data, position * kvDim, kvDim);
    }

    @Override
    public void read(int position, float[] out, int offset) {
        System.arraycopy(data, position * kvDim, out, offset, kvDim);
    }

    @Override
    public int bytesPerPosition() {
        return kvDim * Float.BYTES;
    }
}
