package org.stagegraph;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;

/**
 * A dense, C-order tensor over a direct {@link ByteBuffer} in native byte order. A
 * session reads an input's buffer and writes a bound output's buffer in place,
 * without a copy, so the buffer must stay unchanged while it is bound (the session
 * keeps a reference to it). {@link #close()} drops this object's reference to the
 * buffer; the memory itself belongs to the garbage collector.
 */
public final class Tensor implements AutoCloseable {
  private final DType dtype;
  private final long[] shape;
  private ByteBuffer data;

  private Tensor(DType dtype, long[] shape, ByteBuffer data) {
    this.dtype = dtype;
    this.shape = shape;
    this.data = data;
  }

  /** A zero-filled tensor in new direct memory. */
  public static Tensor allocate(DType dtype, long... shape) {
    long bytes = byteSize(dtype, shape);
    if (bytes > Integer.MAX_VALUE) {
      throw new StagegraphException(StagegraphException.INVALID_ARGUMENT,
          "a tensor of " + bytes + " bytes does not fit one ByteBuffer");
    }
    ByteBuffer b = ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.nativeOrder());
    return new Tensor(dtype, shape.clone(), b);
  }

  /**
   * A tensor over {@code buffer}'s bytes from its position, without a copy. The
   * buffer must be direct and hold exactly the bytes the shape needs from its
   * position to its limit.
   */
  public static Tensor wrap(ByteBuffer buffer, DType dtype, long... shape) {
    if (!buffer.isDirect()) {
      throw new StagegraphException(StagegraphException.INVALID_ARGUMENT,
          "Tensor.wrap needs a direct ByteBuffer (ByteBuffer.allocateDirect): a heap buffer would be copied");
    }
    long bytes = byteSize(dtype, shape);
    if (buffer.remaining() != bytes) {
      throw new StagegraphException(StagegraphException.INVALID_ARGUMENT,
          "the buffer has " + buffer.remaining() + " bytes, a " + dtype.typeName() + shapeText(shape)
              + " tensor needs " + bytes);
    }
    return new Tensor(dtype, shape.clone(), buffer.slice().order(ByteOrder.nativeOrder()));
  }

  /** A copy of float data in a new f32 tensor. */
  public static Tensor fromFloats(float[] values, long... shape) {
    Tensor t = allocate(DType.F32, shape);
    checkCount(values.length, t);
    t.data.asFloatBuffer().put(values);
    return t;
  }

  /** A copy of int data in a new i32 tensor. */
  public static Tensor fromInts(int[] values, long... shape) {
    Tensor t = allocate(DType.I32, shape);
    checkCount(values.length, t);
    t.data.asIntBuffer().put(values);
    return t;
  }

  /** A copy of long data in a new i64 tensor. */
  public static Tensor fromLongs(long[] values, long... shape) {
    Tensor t = allocate(DType.I64, shape);
    checkCount(values.length, t);
    t.data.asLongBuffer().put(values);
    return t;
  }

  public DType dtype() {
    return dtype;
  }

  /** The dims (a copy). */
  public long[] shape() {
    return shape.clone();
  }

  public long numElements() {
    long n = 1;
    for (long d : shape) {
      n *= d;
    }
    return n;
  }

  public long byteSize() {
    return numElements() * dtype.byteSize();
  }

  /** The tensor's bytes (position 0, native order), shared, not copied. */
  public ByteBuffer buffer() {
    return open().duplicate().order(ByteOrder.nativeOrder());
  }

  public FloatBuffer asFloatBuffer() {
    expect(DType.F32);
    return buffer().asFloatBuffer();
  }

  public IntBuffer asIntBuffer() {
    expect(DType.I32);
    return buffer().asIntBuffer();
  }

  public LongBuffer asLongBuffer() {
    expect(DType.I64);
    return buffer().asLongBuffer();
  }

  /** The values of an f32 tensor, copied out. */
  public float[] toFloatArray() {
    FloatBuffer b = asFloatBuffer();
    float[] out = new float[b.remaining()];
    b.get(out);
    return out;
  }

  /** The values of an i64 tensor, copied out. */
  public long[] toLongArray() {
    LongBuffer b = asLongBuffer();
    long[] out = new long[b.remaining()];
    b.get(out);
    return out;
  }

  @Override
  public void close() {
    data = null;
  }

  @Override
  public String toString() {
    return "Tensor(" + dtype.typeName() + shapeText(shape) + ")";
  }

  ByteBuffer open() {
    ByteBuffer b = data;
    if (b == null) {
      throw new StagegraphException(StagegraphException.INVALID_ARGUMENT, "the tensor is closed");
    }
    return b;
  }

  static long byteSize(DType dtype, long[] shape) {
    long n = dtype.byteSize();
    for (long d : shape) {
      if (d < 0) {
        throw new StagegraphException(StagegraphException.INVALID_ARGUMENT,
            "negative dim in shape " + shapeText(shape));
      }
      n = Math.multiplyExact(n, d);
    }
    return n;
  }

  static String shapeText(long[] shape) {
    StringBuilder s = new StringBuilder("[");
    for (int i = 0; i < shape.length; ++i) {
      s.append(i > 0 ? ", " : "").append(shape[i]);
    }
    return s.append(']').toString();
  }

  private void expect(DType t) {
    if (dtype != t) {
      throw new StagegraphException(StagegraphException.INVALID_ARGUMENT,
          "the tensor is " + dtype.typeName() + ", not " + t.typeName());
    }
  }

  private static void checkCount(int given, Tensor t) {
    if (given != t.numElements()) {
      throw new StagegraphException(StagegraphException.INVALID_ARGUMENT,
          given + " values given for a tensor of shape " + shapeText(t.shape) + " (" + t.numElements() + ")");
    }
  }
}
