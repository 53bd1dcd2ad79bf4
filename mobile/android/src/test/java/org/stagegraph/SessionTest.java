package org.stagegraph;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/** Sessions: inputs and outputs without copies, errors with codes and locations, cancel, timeouts. */
public class SessionTest {
  private Program program;

  @Before
  public void load() {
    program = Program.fromFile(TestFiles.path("jni_test.sgraph").toString());
  }

  @After
  public void close() {
    program.close();
  }

  /** x @ w + 1 computed here, the reference for affine. */
  private static float[] affine(float[] x, float[] w, int n) {
    float[] y = new float[n * 2];
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < 2; ++j) {
        float acc = 0;
        for (int k = 0; k < 3; ++k) {
          acc += x[i * 3 + k] * w[k * 2 + j];
        }
        y[i * 2 + j] = acc + 1;
      }
    }
    return y;
  }

  @Test
  public void runsAffineWithASymbolicBatch() {
    float[] w = {0.5f, -1, 2, 0.25f, -3, 1};
    try (Session s = new Session(program, "affine");
        Tensor wt = Tensor.fromFloats(w, 3, 2)) {
      s.setInput("w", wt);
      for (int n : new int[] {1, 4}) {
        float[] x = new float[n * 3];
        for (int i = 0; i < x.length; ++i) {
          x[i] = i * 0.75f - 2;
        }
        try (Tensor xt = Tensor.fromFloats(x, n, 3)) {
          s.setInput("x", xt);
          s.run();
          assertEquals(1, s.numOutputs());
          assertArrayEquals(new long[] {n, 2}, s.outputShape(0));
          Tensor y = s.output(0);
          assertEquals(DType.F32, y.dtype());
          assertArrayEquals(affine(x, w, n), y.toFloatArray(), 1e-5f);
        }
      }
    }
  }

  /** The session reads the input's buffer itself: a change to it shows in the next run. */
  @Test
  public void inputsAreBoundWithoutACopy() {
    try (Session s = new Session(program, "affine");
        Tensor x = Tensor.allocate(DType.F32, 1, 3);
        Tensor w = Tensor.fromFloats(new float[] {1, 0, 0, 1, 0, 0}, 3, 2)) {
      s.setInput("x", x);
      s.setInput("w", w);
      s.run();
      assertArrayEquals(new float[] {1, 1}, s.output(0).toFloatArray(), 0f);
      x.asFloatBuffer().put(new float[] {5, 7, 9});  // no setInput again
      s.run();
      assertArrayEquals(new float[] {6, 8}, s.output(0).toFloatArray(), 0f);
    }
  }

  /** A bound output is written straight into the caller's buffer; a view reads one in place. */
  @Test
  public void outputsIntoBoundBuffersAndViews() {
    try (Session s = new Session(program, "affine");
        Tensor x = Tensor.fromFloats(new float[] {1, 2, 3}, 1, 3);
        Tensor w = Tensor.fromFloats(new float[] {1, 0, 0, 1, 0, 0}, 3, 2);
        Tensor y = Tensor.allocate(DType.F32, 1, 2)) {
      s.setInput(0, x);
      s.setInput(1, w);
      s.bindOutput(0, y);
      s.run();
      assertArrayEquals(new float[] {2, 3}, y.toFloatArray(), 0f);
      FloatBuffer view = s.outputView(0).asFloatBuffer();
      assertEquals(2f, view.get(0), 0f);
      assertEquals(3f, view.get(1), 0f);
      assertTrue(s.outputView(0).isReadOnly());
      s.bindOutput(0, null);
      s.run();
      assertArrayEquals(new float[] {2, 3}, s.output(0).toFloatArray(), 0f);
    }
  }

  @Test
  public void aBoundOutputTooSmallFailsTheRun() {
    try (Session s = new Session(program, "affine");
        Tensor x = Tensor.allocate(DType.F32, 4, 3);
        Tensor w = Tensor.allocate(DType.F32, 3, 2);
        Tensor y = Tensor.allocate(DType.F32, 1, 2)) {
      s.setInput("x", x);
      s.setInput("w", w);
      s.bindOutput(0, y);
      try {
        s.run();
        fail("ran into a too small output");
      } catch (StagegraphException e) {
        assertEquals(e.toString(), StagegraphException.INVALID_ARGUMENT, e.code());
      }
    }
  }

  @Test
  public void aFailedAssertNamesItsLineAndTheSessionStaysUsable() {
    try (Session s = new Session(program, "checked_sqrt");
        Tensor bad = Tensor.fromFloats(new float[] {4, -1}, 2);
        Tensor good = Tensor.fromFloats(new float[] {4, 9}, 2)) {
      s.setInput("x", bad);
      try {
        s.run();
        fail("the assert did not fail");
      } catch (StagegraphException e) {
        assertEquals(StagegraphException.RUNTIME_ERROR, e.code());
        assertTrue(e.getMessage(), e.getMessage().contains("x must not be negative"));
        assertTrue(e.getMessage(), e.getMessage().contains("jni_test.py:"));
      }
      s.setInput("x", good);
      s.run();
      assertArrayEquals(new float[] {2, 3}, s.output(0).toFloatArray(), 0f);
    }
  }

  @Test
  public void badInputsAreRefusedWithTheirCodes() {
    try (Session s = new Session(program, "affine");
        Tensor ints = Tensor.fromInts(new int[] {1, 2, 3}, 1, 3);
        Tensor wrongDim = Tensor.allocate(DType.F32, 1, 4)) {
      try {
        s.setInput("x", ints);
        fail("took an i32 input for f32");
      } catch (StagegraphException e) {
        assertEquals(StagegraphException.INVALID_INPUT, e.code());
        assertTrue(e.getMessage(), e.getMessage().contains("x"));
      }
      try {
        s.setInput("x", wrongDim);
        fail("took a [1, 4] input for [N, 3]");
      } catch (StagegraphException e) {
        assertEquals(StagegraphException.INVALID_INPUT, e.code());
      }
      try {
        s.setInput("nope", wrongDim);
        fail("took an unknown input name");
      } catch (StagegraphException e) {
        assertEquals(StagegraphException.INVALID_INPUT, e.code());
        assertTrue(e.getMessage(), e.getMessage().contains("unknown input 'nope'"));
      }
      try {
        s.run();
        fail("ran without inputs");
      } catch (StagegraphException e) {
        assertEquals(StagegraphException.INVALID_INPUT, e.code());
      }
      try {
        s.output(0);
        fail("gave an output before any run");
      } catch (StagegraphException e) {
        assertEquals(StagegraphException.INVALID_ARGUMENT, e.code());
      }
    }
  }

  @Test
  public void heapBuffersAreRefusedByWrap() {
    try {
      Tensor.wrap(ByteBuffer.allocate(12), DType.F32, 3);
      fail("wrapped a heap buffer");
    } catch (StagegraphException e) {
      assertEquals(StagegraphException.INVALID_ARGUMENT, e.code());
    }
  }

  @Test
  public void cancelFromAnotherThreadEndsTheRun() throws InterruptedException {
    try (Session s = new Session(program, "count");
        Tensor n = Tensor.fromLongs(new long[] {Long.MAX_VALUE})) {
      s.setInput("n", n);
      AtomicReference<Throwable> ended = new AtomicReference<>();
      Thread runner = new Thread(() -> {
        try {
          s.run();
        } catch (Throwable t) {
          ended.set(t);
        }
      });
      runner.start();
      Thread.sleep(100);
      s.cancel();
      runner.join(30_000);
      assertTrue("the run did not end after cancel()", !runner.isAlive());
      Throwable t = ended.get();
      assertTrue(String.valueOf(t), t instanceof StagegraphException);
      assertEquals(StagegraphException.CANCELLED, ((StagegraphException) t).code());
      try (Tensor small = Tensor.fromLongs(new long[] {3})) {
        s.setInput("n", small);
        s.run();
        assertArrayEquals(new long[] {3}, s.output(0).toLongArray());
      }
    }
  }

  @Test
  public void aRunPastItsTimeoutEnds() {
    try (Session s = new Session(program, "count", new Session.Options().setRunTimeoutMicros(20_000));
        Tensor n = Tensor.fromLongs(new long[] {Long.MAX_VALUE})) {
      s.setInput("n", n);
      try {
        s.run();
        fail("an endless loop finished");
      } catch (StagegraphException e) {
        assertEquals(e.toString(), StagegraphException.DEADLINE_EXCEEDED, e.code());
      }
    }
  }

  @Test
  public void closedSessionIsAnError() {
    Session s = new Session(program, "affine");
    s.close();
    try {
      s.run();
      fail("ran a closed session");
    } catch (StagegraphException e) {
      assertEquals(StagegraphException.INVALID_ARGUMENT, e.code());
    }
  }
}
