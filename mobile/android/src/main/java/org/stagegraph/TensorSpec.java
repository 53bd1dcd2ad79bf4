package org.stagegraph;

import java.util.Arrays;

/**
 * An input or output of an entry point as its signature declares it: name, dtype and
 * shape, where a symbolic dim is -1 and has a name ("N").
 */
public final class TensorSpec {
  private final String name;
  private final DType dtype;
  private final long[] shape;
  private final String[] dimNames;

  TensorSpec(String name, DType dtype, long[] shape, String[] dimNames) {
    this.name = name;
    this.dtype = dtype;
    this.shape = shape;
    this.dimNames = dimNames;
  }

  public String name() {
    return name;
  }

  public DType dtype() {
    return dtype;
  }

  public int rank() {
    return shape.length;
  }

  /** The dims, -1 where symbolic (a copy). */
  public long[] shape() {
    return shape.clone();
  }

  /** The name of dim {@code axis} when it is symbolic, else "". */
  public String dimName(int axis) {
    return dimNames[axis];
  }

  /** "x: f32[N, 784]". */
  @Override
  public String toString() {
    StringBuilder s = new StringBuilder(name).append(": ").append(dtype.typeName()).append('[');
    for (int i = 0; i < shape.length; ++i) {
      if (i > 0) {
        s.append(", ");
      }
      s.append(shape[i] < 0 ? dimNames[i] : Long.toString(shape[i]));
    }
    return s.append(']').toString();
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof TensorSpec)) {
      return false;
    }
    TensorSpec t = (TensorSpec) o;
    return name.equals(t.name) && dtype == t.dtype && Arrays.equals(shape, t.shape)
        && Arrays.equals(dimNames, t.dimNames);
  }

  @Override
  public int hashCode() {
    return name.hashCode() * 31 + Arrays.hashCode(shape);
  }
}
