package org.stagegraph;

/** Element types, numbered as the C API's sg_dtype and the graph format. */
public enum DType {
  F32(0, 4),
  F16(1, 2),
  I32(2, 4),
  I64(3, 8),
  BOOL(4, 1);

  private final int code;
  private final int size;

  DType(int code, int size) {
    this.code = code;
    this.size = size;
  }

  /** The C API's sg_dtype value. */
  public int code() {
    return code;
  }

  /** Bytes per element. */
  public int byteSize() {
    return size;
  }

  /** "f32", "i64", ... as the graph format and graph-inspect write them. */
  public String typeName() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }

  static DType of(int code) {
    for (DType t : values()) {
      if (t.code == code) {
        return t;
      }
    }
    throw new StagegraphException(StagegraphException.INTERNAL, "unknown dtype code " + code);
  }
}
