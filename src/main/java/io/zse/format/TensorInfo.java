package io.zse.format;

import java.util.Arrays;

/**
 * One tensor-index entry: what a tensor is and where its bytes lie (absolute file offsets).
 *
 * @param shape outermost dimension first, e.g. {@code [out_features, in_features]}
 */
public record TensorInfo(String name, TensorType type, int layout, long[] shape, int groupSize,
                         long dataOffset, long dataLength, long scalesOffset, long scalesLength,
                         int dataCrc, int scalesCrc) {

    public TensorInfo {
        shape = shape.clone();
    }

    @Override
    public long[] shape() {
        return shape.clone();
    }

    public int rank() {
        return shape.length;
    }

    public long dim(int i) {
        return shape[i];
    }

    /** Product of the shape (1 for a scalar); -1 if it overflows a long. */
    public long elementCount() {
        long n = 1;
        for (long d : shape) {
            if (d != 0 && n > Long.MAX_VALUE / d) {
                return -1;
            }
            n *= d;
        }
        return n;
    }

    /** Length of the last dimension: the row that quantization groups run along. */
    public long rowLength() {
        return shape.length == 0 ? 1 : shape[shape.length - 1];
    }

    public String shapeString() {
        return Arrays.toString(shape);
    }

    public TensorInfo withPlacement(long dataOffset, long scalesOffset) {
        return new TensorInfo(name, type, layout, shape, groupSize, dataOffset, dataLength, scalesOffset,
                scalesLength, dataCrc, scalesCrc);
    }

    public TensorInfo withCrcs(int dataCrc, int scalesCrc) {
        return new TensorInfo(name, type, layout, shape, groupSize, dataOffset, dataLength, scalesOffset,
                scalesLength, dataCrc, scalesCrc);
    }

    public TensorInfo withLayout(int layout) {
        return new TensorInfo(name, type, layout, shape, groupSize, dataOffset, dataLength, scalesOffset,
                scalesLength, dataCrc, scalesCrc);
    }

    /** An entry not yet placed in a file: lengths follow from type, shape and group size. */
    public static TensorInfo planned(String name, TensorType type, long[] shape, int groupSize) {
        TensorInfo t = new TensorInfo(name, type, ZseLayout.LAYOUT_ROW_GROUPS, shape, groupSize, 0, 0, 0, 0, 0, 0);
        long n = t.elementCount();
        return new TensorInfo(name, type, ZseLayout.LAYOUT_ROW_GROUPS, shape, groupSize, 0, type.dataBytes(n), 0,
                type.scaleBytes(n, groupSize), 0, 0);
    }
}
