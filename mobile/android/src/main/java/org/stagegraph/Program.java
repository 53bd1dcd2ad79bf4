package org.stagegraph;

import java.io.FileDescriptor;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A loaded graph file: immutable, usable from any number of threads, and the source
 * of {@link Session}s. Load it from a file, from bytes in memory (an asset read into
 * a byte array or a direct ByteBuffer), or from a range of an open file descriptor (a
 * graph stored uncompressed in an APK: AssetFileDescriptor's descriptor, start offset
 * and length). Sessions keep their program's native memory alive, so a program may
 * be closed while they are still in use.
 */
public final class Program implements AutoCloseable {
  private long handle;
  // A direct buffer used in place: referenced for as long as the program lives.
  private final ByteBuffer inPlace;
  private final List<EntryPoint> entries;

  private Program(long handle, ByteBuffer inPlace) {
    this.handle = handle;
    this.inPlace = inPlace;
    this.entries = Collections.unmodifiableList(readEntries(handle));
  }

  /**
   * How a program is loaded. Every load checks the file's header, its table's
   * checksum and its data segment's checksum (XXH3-64, at memory speed: a changed
   * weight is refused with INVALID_GRAPH); {@link #setVerifyData setVerifyData(false)}
   * skips the data check, for an application that verified the file itself.
   */
  public static final class LoadOptions {
    boolean verifyData = true;

    /** Check the data segment's checksum on load (default true). */
    public LoadOptions setVerifyData(boolean verify) {
      verifyData = verify;
      return this;
    }
  }

  private static final LoadOptions DEFAULT_LOAD = new LoadOptions();

  /** Memory-maps the file at {@code path}. */
  public static Program fromFile(String path) {
    return fromFile(path, DEFAULT_LOAD);
  }

  public static Program fromFile(String path, LoadOptions options) {
    return new Program(NativeLib.loadFile(path, options.verifyData), null);
  }

  /** Copies the graph from {@code bytes} once; the array may be reused at once. */
  public static Program fromBytes(byte[] bytes) {
    return fromBytes(bytes, DEFAULT_LOAD);
  }

  public static Program fromBytes(byte[] bytes, LoadOptions options) {
    return new Program(NativeLib.loadBytes(bytes, 0, bytes.length, options.verifyData), null);
  }

  /**
   * The graph in {@code buffer}'s remaining bytes. A direct buffer whose address is
   * 64-byte aligned is used in place, without a copy (the program holds a reference
   * to it; leave its bytes unchanged); any other buffer is copied once.
   */
  public static Program fromByteBuffer(ByteBuffer buffer) {
    return fromByteBuffer(buffer, DEFAULT_LOAD);
  }

  public static Program fromByteBuffer(ByteBuffer buffer, LoadOptions options) {
    if (!buffer.isDirect()) {
      byte[] copy = new byte[buffer.remaining()];
      buffer.duplicate().get(copy);
      return fromBytes(copy, options);
    }
    long h = NativeLib.loadDirect(buffer, buffer.position(), buffer.remaining(), false, options.verifyData);
    return new Program(h, buffer);
  }

  /**
   * The graph in the {@code length} bytes at {@code offset} of the open file
   * {@code fd} (length 0: to the end of the file). The descriptor is not closed
   * and may be closed as soon as this returns.
   */
  public static Program fromFileDescriptor(FileDescriptor fd, long offset, long length) {
    return fromFileDescriptor(fd, offset, length, DEFAULT_LOAD);
  }

  public static Program fromFileDescriptor(FileDescriptor fd, long offset, long length, LoadOptions options) {
    return fromFd(NativeLib.fdOf(fd), offset, length, options);
  }

  /** As {@link #fromFileDescriptor}, from the descriptor's number (ParcelFileDescriptor.getFd()). */
  public static Program fromFd(int fd, long offset, long length) {
    return fromFd(fd, offset, length, DEFAULT_LOAD);
  }

  public static Program fromFd(int fd, long offset, long length, LoadOptions options) {
    return new Program(NativeLib.loadFd(fd, offset, length, options.verifyData), null);
  }

  /** The library's version, "MAJOR.MINOR.PATCH". */
  public static String libraryVersion() {
    return NativeLib.versionString();
  }

  public List<EntryPoint> entries() {
    return entries;
  }

  /** The entry point named {@code name}; INVALID_ARGUMENT naming the entries there are. */
  public EntryPoint entry(String name) {
    StringBuilder names = new StringBuilder();
    for (EntryPoint e : entries) {
      if (e.name().equals(name)) {
        return e;
      }
      names.append(names.length() > 0 ? ", " : "").append(e.name());
    }
    throw new StagegraphException(StagegraphException.INVALID_ARGUMENT,
        "no entry point '" + name + "' (the program has: " + names + ")");
  }

  /** A session running entry point {@code entry} with default options. */
  public Session newSession(String entry) {
    return new Session(this, entry, new Session.Options());
  }

  @Override
  public synchronized void close() {
    if (handle != 0) {
      NativeLib.programRelease(handle);
      handle = 0;
    }
  }

  synchronized long handle() {
    if (handle == 0) {
      throw new StagegraphException(StagegraphException.INVALID_ARGUMENT, "the program is closed");
    }
    return handle;
  }

  ByteBuffer inPlaceBuffer() {
    return inPlace;
  }

  private static List<EntryPoint> readEntries(long h) {
    List<EntryPoint> out = new ArrayList<>();
    int n = NativeLib.numEntries(h);
    for (int e = 0; e < n; ++e) {
      out.add(new EntryPoint(NativeLib.entryName(h, e), specs(h, e, false), specs(h, e, true)));
    }
    return out;
  }

  private static List<TensorSpec> specs(long h, int entry, boolean outputs) {
    List<TensorSpec> out = new ArrayList<>();
    int n = NativeLib.numTensors(h, entry, outputs);
    for (int i = 0; i < n; ++i) {
      out.add(new TensorSpec(NativeLib.tensorName(h, entry, outputs, i),
          DType.of(NativeLib.tensorDtype(h, entry, outputs, i)), NativeLib.tensorShape(h, entry, outputs, i),
          NativeLib.tensorDimNames(h, entry, outputs, i)));
    }
    return out;
  }
}
