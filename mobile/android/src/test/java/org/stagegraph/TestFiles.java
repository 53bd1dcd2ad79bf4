package org.stagegraph;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The test graphs and NumPy files the build writes (-Dstagegraph.test.dir). */
final class TestFiles {
  private TestFiles() {}

  static Path dir() {
    String d = System.getProperty("stagegraph.test.dir");
    if (d == null) {
      throw new IllegalStateException("-Dstagegraph.test.dir is not set (run the tests through ctest)");
    }
    return Paths.get(d);
  }

  static Path path(String name) {
    return dir().resolve(name);
  }

  static byte[] bytes(String name) throws IOException {
    return Files.readAllBytes(path(name));
  }

  /** A .npy file (version 1, little-endian f4 or i8, C order) as a tensor. */
  static Tensor readNpy(Path file) throws IOException {
    byte[] all = Files.readAllBytes(file);
    ByteBuffer b = ByteBuffer.wrap(all).order(ByteOrder.LITTLE_ENDIAN);
    if (all.length < 10 || all[0] != (byte) 0x93 || all[1] != 'N') {
      throw new IOException(file + ": not a .npy file");
    }
    int headerLen = b.getShort(8) & 0xffff;
    String header = new String(all, 10, headerLen, StandardCharsets.US_ASCII);
    Matcher descr = Pattern.compile("'descr': *'([<|=]?)([a-z0-9]+)'").matcher(header);
    Matcher shape = Pattern.compile("'shape': *\\(([^)]*)\\)").matcher(header);
    if (!descr.find() || !shape.find() || header.contains("'fortran_order': True")) {
      throw new IOException(file + ": unsupported header " + header);
    }
    String[] parts = shape.group(1).split(",");
    long[] dims = new long[0];
    for (String p : parts) {
      if (!p.trim().isEmpty()) {
        dims = java.util.Arrays.copyOf(dims, dims.length + 1);
        dims[dims.length - 1] = Long.parseLong(p.trim());
      }
    }
    DType dtype;
    switch (descr.group(2)) {
      case "f4": dtype = DType.F32; break;
      case "i8": dtype = DType.I64; break;
      case "i4": dtype = DType.I32; break;
      default: throw new IOException(file + ": unsupported dtype " + descr.group(2));
    }
    Tensor t = Tensor.allocate(dtype, dims);
    ByteBuffer data = ByteBuffer.wrap(all, 10 + headerLen, all.length - 10 - headerLen).order(ByteOrder.LITTLE_ENDIAN);
    ByteBuffer dst = t.buffer();
    if (dtype == DType.F32) {
      while (data.remaining() >= 4 && dst.remaining() >= 4) {
        dst.putFloat(data.getFloat());
      }
    } else if (dtype == DType.I64) {
      while (data.remaining() >= 8 && dst.remaining() >= 8) {
        dst.putLong(data.getLong());
      }
    } else {
      while (data.remaining() >= 4 && dst.remaining() >= 4) {
        dst.putInt(data.getInt());
      }
    }
    return t;
  }
}
