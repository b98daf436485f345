package io.zse.convert.gguf;

/** The error a conversion step adds to values, accumulated over a tensor or a group of tensors. */
final class AddedError {
    private double maxAbs;
    private double maxReference;
    private double sumSquaredError;
    private double sumSquaredReference;

    /** Compares {@code count} converted values with the values they came from. */
    void add(float[] reference, float[] converted, int count) {
        for (int i = 0; i < count; i++) {
            double e = (double) converted[i] - reference[i];
            maxAbs = Math.max(maxAbs, Math.abs(e));
            maxReference = Math.max(maxReference, Math.abs(reference[i]));
            sumSquaredError += e * e;
            sumSquaredReference += (double) reference[i] * reference[i];
        }
    }

    void add(AddedError other) {
        maxAbs = Math.max(maxAbs, other.maxAbs);
        maxReference = Math.max(maxReference, other.maxReference);
        sumSquaredError += other.sumSquaredError;
        sumSquaredReference += other.sumSquaredReference;
    }

    double maxAbs() {
        return maxAbs;
    }

    /** Largest error over the largest |value|. */
    double maxRelative() {
        return maxReference == 0 ? 0 : maxAbs / maxReference;
    }

    /** RMS of the error over RMS of the values. */
    double rmsRelative() {
        return sumSquaredReference == 0 ? 0 : Math.sqrt(sumSquaredError / sumSquaredReference);
    }

    @Override
    public String toString() {
        return String.format("added error max %.3g (%.3g %% of max |w|), RMS %.3g %% of RMS w", maxAbs,
                100 * maxRelative(), 100 * rmsRelative());
    }
}
