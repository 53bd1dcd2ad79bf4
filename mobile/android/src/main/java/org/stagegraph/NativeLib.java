package org.stagegraph;

import java.io.FileDescriptor;
import java.nio.ByteBuffer;

/**
 * The JNI library's functions (libstagegraph_jni.so, stagegraph_jni.c): thin calls
 * of the C API. Handles are the C API's pointers as longs. Every function that can
 * fail throws {@link StagegraphException} with the C API's status code and message.
 */
final class NativeLib {
  private NativeLib() {}

  static {
    // -Dstagegraph.jni.path=/abs/libstagegraph_jni.so for tests; else the usual lookup.
    String path = System.getProperty("stagegraph.jni.path");
    if (path != null && !path.isEmpty()) {
      System.load(path);
    } else {
      System.loadLibrary("stagegraph_jni");
    }
  }

  static native String versionString();

  static native String codeName(int code);

  // Programs. loadMemory reads `size` bytes at `buffer`'s position (direct) or of `bytes`.
  static native long loadFile(String path, boolean verifyData);

  static native long loadDirect(ByteBuffer buffer, int position, int size, boolean copy, boolean verifyData);

  static native long loadBytes(byte[] bytes, int offset, int size, boolean verifyData);

  static native long loadFd(int fd, long offset, long length, boolean verifyData);

  static native int fdOf(FileDescriptor fd);

  static native void programRelease(long program);

  static native int numEntries(long program);

  static native String entryName(long program, int entry);

  static native int numTensors(long program, int entry, boolean outputs);

  static native String tensorName(long program, int entry, boolean outputs, int index);

  static native int tensorDtype(long program, int entry, boolean outputs, int index);

  static native long[] tensorShape(long program, int entry, boolean outputs, int index);

  static native String[] tensorDimNames(long program, int entry, boolean outputs, int index);

  // Sessions.
  static native long sessionCreate(long program, String entry, int numThreads, long memoryLimit,
      long runTimeoutMicros);

  static native void sessionRelease(long session);

  static native int inputIndex(long session, String name);

  static native int outputIndex(long session, String name);

  static native void setInput(long session, int index, int dtype, long[] shape, ByteBuffer data, long nbytes);

  static native void bindOutput(long session, int index, ByteBuffer data, long capacity);

  static native void run(long session);

  // The session's variables as safetensors (SPEC §12).
  static native void saveVariables(long session, String path);

  static native void loadVariables(long session, String path);

  static native void copyVariables(long session, long from);

  static native void cancel(long session);

  static native void setRunTimeout(long session, long micros);

  static native int numOutputs(long session);

  static native int outputDtype(long session, int index);

  static native long[] outputShape(long session, int index);

  /** A direct buffer over output `index` in place (valid until the next run). */
  static native ByteBuffer outputView(long session, int index);
}
