package org.stagegraph;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import org.junit.Test;

/** Loading programs (file, bytes, direct buffer, descriptor range) and reading their entry points. */
public class ProgramTest {
  private static final String GRAPH = "jni_test.sgraph";

  /** affine(x: f32[N, 3], w: f32[3, 2]) is there, with its signature, in any load. */
  private static void checkEntries(Program p) {
    List<EntryPoint> entries = p.entries();
    assertEquals(3, entries.size());
    EntryPoint affine = p.entry("affine");
    assertEquals("affine", affine.name());
    assertEquals(2, affine.inputs().size());
    TensorSpec x = affine.inputs().get(0);
    assertEquals("x", x.name());
    assertEquals(DType.F32, x.dtype());
    assertArrayEquals(new long[] {-1, 3}, x.shape());
    assertEquals("N", x.dimName(0));
    assertEquals("", x.dimName(1));
    assertEquals("x: f32[N, 3]", x.toString());
    assertArrayEquals(new long[] {3, 2}, affine.inputs().get(1).shape());
    assertEquals(1, affine.outputs().size());
    TensorSpec y = affine.outputs().get(0);
    assertEquals(DType.F32, y.dtype());
    assertArrayEquals(new long[] {-1, 2}, y.shape());
    assertEquals(DType.I64, p.entry("count").inputs().get(0).dtype());
    assertEquals(0, p.entry("count").inputs().get(0).rank());
  }

  /** Runs affine on ones: every output is 3 * 1 * 1 + 1 = 4. */
  private static void checkRuns(Program p) {
    try (Session s = p.newSession("affine");
        Tensor x = Tensor.fromFloats(new float[] {1, 1, 1}, 1, 3);
        Tensor w = Tensor.fromFloats(new float[] {1, 1, 1, 1, 1, 1}, 3, 2)) {
      s.setInput("x", x);
      s.setInput("w", w);
      s.run();
      assertArrayEquals(new float[] {4, 4}, s.output(0).toFloatArray(), 0f);
    }
  }

  @Test
  public void loadsFromFile() {
    try (Program p = Program.fromFile(TestFiles.path(GRAPH).toString())) {
      checkEntries(p);
      checkRuns(p);
    }
  }

  @Test
  public void loadsFromByteArray() throws IOException {
    byte[] bytes = TestFiles.bytes(GRAPH);
    try (Program p = Program.fromBytes(bytes)) {
      Arrays.fill(bytes, (byte) 0);  // copied on load: the array is free at once
      checkEntries(p);
      checkRuns(p);
    }
  }

  @Test
  public void loadsFromDirectAndHeapBuffers() throws IOException {
    byte[] bytes = TestFiles.bytes(GRAPH);
    ByteBuffer direct = ByteBuffer.allocateDirect(bytes.length + 64);
    direct.position(64).mark();
    direct.put(bytes).reset();
    try (Program p = Program.fromByteBuffer(direct)) {
      checkEntries(p);
      checkRuns(p);
    }
    try (Program p = Program.fromByteBuffer(ByteBuffer.wrap(bytes))) {
      checkRuns(p);
    }
  }

  /** A graph stored inside a bigger file (as in an APK), at aligned and unaligned offsets. */
  @Test
  public void loadsFromFileDescriptorRange() throws IOException {
    byte[] graph = TestFiles.bytes(GRAPH);
    for (int offset : new int[] {0, 128, 100}) {
      File f = File.createTempFile("sg_apk", ".bin");
      f.deleteOnExit();
      try (FileOutputStream out = new FileOutputStream(f)) {
        out.write(new byte[offset]);
        out.write(graph);
        out.write(new byte[77]);  // what follows in the archive
      }
      try (FileInputStream in = new FileInputStream(f);
          Program p = Program.fromFileDescriptor(in.getFD(), offset, graph.length)) {
        checkEntries(p);
        checkRuns(p);
      }
      assertTrue(f.delete());
    }
  }

  @Test
  public void refusesBadBytesWithItsCode() throws IOException {
    byte[] bytes = TestFiles.bytes(GRAPH);
    bytes[bytes.length / 2] ^= 0x5a;
    byte[] truncated = Arrays.copyOf(bytes, 40);
    for (byte[] bad : new byte[][] {truncated, "not a graph file".getBytes("US-ASCII")}) {
      try {
        Program.fromBytes(bad).close();
        fail("loaded a bad graph");
      } catch (StagegraphException e) {
        assertEquals(StagegraphException.INVALID_GRAPH, e.code());
        assertEquals("invalid graph", e.codeName());
        assertFalse(e.getMessage().isEmpty());
      }
    }
  }

  /** The graph with one byte of its data segment (where weights lie) flipped. */
  private static byte[] flippedWeightByte() throws IOException {
    byte[] bytes = TestFiles.bytes(GRAPH);
    long dataOffset = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getLong(32);
    bytes[(int) dataOffset] ^= 0x01;
    return bytes;
  }

  private static void assertRefusedAsChanged(Runnable load) {
    try {
      load.run();
      fail("loaded a graph whose data segment was changed");
    } catch (StagegraphException e) {
      assertEquals(StagegraphException.INVALID_GRAPH, e.code());
      assertTrue(e.getMessage(), e.getMessage().contains("data segment checksum mismatch"));
    }
  }

  /** Every load checks the weights' checksum unless the options say not to. */
  @Test
  public void changedWeightsAreRefusedByDefault() throws IOException {
    byte[] bytes = flippedWeightByte();
    File f = File.createTempFile("sg_flipped", ".sgraph");
    f.deleteOnExit();
    try (FileOutputStream out = new FileOutputStream(f)) {
      out.write(bytes);
    }
    ByteBuffer direct = ByteBuffer.allocateDirect(bytes.length);
    direct.put(bytes).flip();
    assertRefusedAsChanged(() -> Program.fromFile(f.getPath()).close());
    assertRefusedAsChanged(() -> Program.fromBytes(bytes).close());
    assertRefusedAsChanged(() -> Program.fromByteBuffer(direct).close());
    try (FileInputStream in = new FileInputStream(f)) {
      assertRefusedAsChanged(() -> Program.fromFileDescriptor(getFd(in), 0, 0).close());
    }
    Program.LoadOptions unchecked = new Program.LoadOptions().setVerifyData(false);
    try (Program p = Program.fromFile(f.getPath(), unchecked)) {
      checkEntries(p);
    }
    try (Program p = Program.fromBytes(bytes, unchecked)) {
      checkEntries(p);
    }
    try (FileInputStream in = new FileInputStream(f);
        Program p = Program.fromFileDescriptor(in.getFD(), 0, 0, unchecked)) {
      checkEntries(p);
    }
    assertTrue(f.delete());
  }

  private static java.io.FileDescriptor getFd(FileInputStream in) {
    try {
      return in.getFD();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  public void missingFileIsAnErrorNamingIt() {
    String path = TestFiles.path("no_such.sgraph").toString();
    try {
      Program.fromFile(path).close();
      fail("loaded a missing file");
    } catch (StagegraphException e) {
      assertEquals(StagegraphException.NOT_FOUND, e.code());
      assertEquals("not found", e.codeName());
      assertTrue(e.getMessage(), e.getMessage().contains("no_such.sgraph"));
    }
  }

  @Test
  public void unknownEntryNamesTheEntries() {
    try (Program p = Program.fromFile(TestFiles.path(GRAPH).toString())) {
      try {
        p.newSession("nope");
        fail("made a session on an unknown entry");
      } catch (StagegraphException e) {
        assertEquals(StagegraphException.INVALID_ARGUMENT, e.code());
        assertTrue(e.getMessage(), e.getMessage().contains("affine"));
      }
    }
  }

  @Test
  public void closedProgramIsAnError() {
    Program p = Program.fromFile(TestFiles.path(GRAPH).toString());
    p.close();
    p.close();  // twice is fine
    try {
      p.newSession("affine");
      fail("used a closed program");
    } catch (StagegraphException e) {
      assertEquals(StagegraphException.INVALID_ARGUMENT, e.code());
    }
  }

  @Test
  public void sessionOutlivesItsClosedProgram() {
    Program p = Program.fromFile(TestFiles.path(GRAPH).toString());
    Session s = p.newSession("count");
    p.close();
    try (Tensor n = Tensor.fromLongs(new long[] {7})) {
      s.setInput("n", n);
      s.run();
      assertArrayEquals(new long[] {7}, s.output(0).toLongArray());
    } finally {
      s.close();
    }
  }

  @Test
  public void versionIsThere() {
    assertTrue(Program.libraryVersion().matches("\\d+\\.\\d+\\.\\d+"));
  }
}
