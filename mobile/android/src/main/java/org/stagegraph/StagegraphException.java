package org.stagegraph;

/**
 * A failure reported by the runtime: the C API's status code ({@link #code()}, one of
 * the constants below) and its message, which names what failed and where
 * ("model.py:12:5: error: ..." for a failed run).
 */
public final class StagegraphException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public static final int INVALID_ARGUMENT = 1;
  public static final int INVALID_GRAPH = 2;
  public static final int INVALID_INPUT = 3;
  public static final int RUNTIME_ERROR = 4;
  public static final int LIMIT_EXCEEDED = 5;
  public static final int OUT_OF_MEMORY = 6;
  public static final int CANCELLED = 7;
  public static final int UNSUPPORTED = 8;
  public static final int INTERNAL = 9;
  public static final int DEADLINE_EXCEEDED = 10;
  /** The graph file does not exist. */
  public static final int NOT_FOUND = 11;

  private final int code;

  public StagegraphException(int code, String message) {
    super(message);
    this.code = code;
  }

  /** The status code (sg_code of the C API). */
  public int code() {
    return code;
  }

  /** The code's name: "invalid graph", "runtime error", ... */
  public String codeName() {
    return NativeLib.codeName(code);
  }

  @Override
  public String toString() {
    return "StagegraphException(" + codeName() + "): " + getMessage();
  }
}
