package org.stagegraph;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * Training through the Java API (SPEC §12) on train_test.py's graph: the loss of
 * train_step falls over the steps; the variables saved and loaded into new sessions
 * give the same predictions bit for bit, and the same next step; files that do not
 * match the program are refused, naming the problem, and change nothing.
 */
public class TrainTest {
  private static final int N = 32;
  private static final int STEPS = 60;

  private Path work;

  @Before
  public void makeDir() throws IOException {
    work = Files.createTempDirectory("stagegraph-train");
  }

  @After
  public void removeDir() throws IOException {
    try (java.util.stream.Stream<Path> files = Files.list(work)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        Files.delete(f);
      }
    }
    Files.delete(work);
  }

  // Inputs with a fixed seed: 4 features, the class is the largest of the first 3.
  private static Tensor features(long seed) {
    Random r = new Random(seed);
    float[] x = new float[N * 4];
    for (int i = 0; i < x.length; ++i) {
      x[i] = (float) r.nextGaussian();
    }
    return Tensor.fromFloats(x, N, 4);
  }

  private static Tensor labels(Tensor x) {
    float[] v = x.toFloatArray();
    long[] y = new long[N];
    for (int i = 0; i < N; ++i) {
      int best = 0;
      for (int c = 1; c < 3; ++c) {
        if (v[i * 4 + c] > v[i * 4 + best]) {
          best = c;
        }
      }
      y[i] = best;
    }
    return Tensor.fromLongs(y, N);
  }

  private static Program load() {
    return Program.fromFile(TestFiles.path("train_test.sgraph").toString());
  }

  private static float step(Session train) {
    train.run();
    return train.output(0).toFloatArray()[0];
  }

  // predict's logits on x, as their bits, after checking the step count it returns.
  private static int[] predictBits(Session predict, Tensor x, long steps) {
    predict.setInput("x", x);
    predict.run();
    assertArrayEquals(new long[] {steps}, predict.output("steps").toLongArray());
    float[] logits = predict.output("logits").toFloatArray();
    assertEquals(N * 3, logits.length);
    int[] bits = new int[logits.length];
    for (int i = 0; i < bits.length; ++i) {
      assertTrue("logit " + i + " is not finite", Float.isFinite(logits[i]));
      bits[i] = Float.floatToRawIntBits(logits[i]);
    }
    return bits;
  }

  private static double accuracy(int[] logitBits, Tensor y) {
    long[] labels = y.toLongArray();
    int right = 0;
    for (int i = 0; i < N; ++i) {
      int best = 0;
      for (int c = 1; c < 3; ++c) {
        if (Float.intBitsToFloat(logitBits[i * 3 + c]) > Float.intBitsToFloat(logitBits[i * 3 + best])) {
          best = c;
        }
      }
      right += best == labels[i] ? 1 : 0;
    }
    return right / (double) N;
  }

  @Test
  public void trainsSavesAndReloads() throws IOException {
    Tensor x = features(1);
    Tensor y = labels(x);
    Tensor xTest = features(2);
    Tensor yTest = labels(xTest);
    Path saved = work.resolve("trained.safetensors");
    try (Program p = load();
        Session untrained = new Session(p, "predict");
        Session train = new Session(p, "train_step");
        Session reloaded = new Session(p, "predict")) {
      int[] before = predictBits(untrained, xTest, 0);

      train.setInput("x", x);
      train.setInput("y", y);
      float[] losses = new float[STEPS];
      for (int i = 0; i < STEPS; ++i) {
        losses[i] = step(train);
        assertTrue("loss " + i + " = " + losses[i], Float.isFinite(losses[i]) && losses[i] >= 0);
      }
      // Cross-entropy over 3 classes starts near ln 3 and falls well below it.
      assertTrue("first loss " + losses[0], losses[0] > 0.5f);
      assertTrue("losses " + Arrays.toString(losses), losses[STEPS - 1] < 0.25f * losses[0]);
      float firstTen = 0;
      float lastTen = 0;
      for (int i = 0; i < 10; ++i) {
        firstTen += losses[i];
        lastTen += losses[STEPS - 10 + i];
      }
      assertTrue("losses " + Arrays.toString(losses), lastTen < 0.5f * firstTen);

      train.saveVariables(saved.toString());
      assertTrue(Files.size(saved) > 0);
      // The next step from the saved state, for the replay below.
      float next = step(train);

      reloaded.loadVariables(saved.toString());
      int[] trained = predictBits(reloaded, xTest, STEPS);
      assertFalse("trained predictions equal the untrained ones", Arrays.equals(before, trained));
      assertTrue("test accuracy " + accuracy(trained, yTest), accuracy(trained, yTest) >= 0.8);
      // Sessions never share variables: the untrained session is still untrained.
      assertArrayEquals(before, predictBits(untrained, xTest, 0));

      // Another program loaded from the file, and sessions on it, from the same variables:
      // the same predictions bit for bit, and the same next training step.
      try (Program q = load();
          Session predict = new Session(q, "predict");
          Session again = new Session(q, "train_step")) {
        predict.loadVariables(saved.toString());
        assertArrayEquals(trained, predictBits(predict, xTest, STEPS));
        again.loadVariables(saved.toString());
        again.setInput("x", x);
        again.setInput("y", y);
        assertEquals(Float.floatToRawIntBits(next), Float.floatToRawIntBits(step(again)));
        // What a session loaded it saves again byte for byte.
        Path resaved = work.resolve("resaved.safetensors");
        predict.saveVariables(resaved.toString());
        assertArrayEquals(Files.readAllBytes(saved), Files.readAllBytes(resaved));
        // Copied without a file, from a session of the other program: the same bits.
        untrained.copyVariablesFrom(predict);
        assertArrayEquals(trained, predictBits(untrained, xTest, STEPS));
      }
    }
  }

  private static StagegraphException refused(Session s, Path file) {
    return assertThrows(StagegraphException.class, () -> s.loadVariables(file.toString()));
  }

  @Test
  public void refusesFilesThatDoNotMatch() throws IOException {
    Tensor xTest = features(2);
    Path saved = work.resolve("trained.safetensors");
    Path none = work.resolve("none.safetensors");
    try (Program p = load();
        Program other = Program.fromFile(TestFiles.path("jni_test.sgraph").toString());
        Session train = new Session(p, "train_step");
        Session predict = new Session(p, "predict");
        Session affine = new Session(other, "affine")) {
      Tensor x = features(1);
      train.setInput("x", x);
      train.setInput("y", labels(x));
      for (int i = 0; i < 5; ++i) {
        step(train);
      }
      train.saveVariables(saved.toString());
      predict.loadVariables(saved.toString());
      int[] trained = predictBits(predict, xTest, 5);

      // A missing file: NOT_FOUND, naming it.
      Path missing = work.resolve("no_such.safetensors");
      StagegraphException e = refused(predict, missing);
      assertEquals(e.getMessage(), StagegraphException.NOT_FOUND, e.code());
      assertTrue(e.getMessage(), e.getMessage().contains("no_such.safetensors"));

      // A program without variables saves a file without any: this program's are missing.
      affine.saveVariables(none.toString());
      e = refused(predict, none);
      assertEquals(e.getMessage(), StagegraphException.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage(), e.getMessage().contains("has no value for variable"));

      // This program's variables are not the other program's.
      e = refused(affine, saved);
      assertEquals(e.getMessage(), StagegraphException.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage(), e.getMessage().contains("which is not a variable of this program"));

      // A variable of another dtype (the same bytes, relabelled i32): named, with both types.
      byte[] bytes = Files.readAllBytes(saved);
      String text = new String(bytes, StandardCharsets.ISO_8859_1);
      String from = "\"params.b2\":{\"dtype\":\"F32\"";
      assertTrue(text, text.contains(from));
      Path retyped = work.resolve("retyped.safetensors");
      Files.write(retyped, text.replace(from, from.replace("F32", "I32")).getBytes(StandardCharsets.ISO_8859_1));
      e = refused(predict, retyped);
      assertEquals(e.getMessage(), StagegraphException.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage(), e.getMessage().contains("'params.b2' is i32[3] there but f32[3]"));

      // A truncated file.
      Path cut = work.resolve("cut.safetensors");
      Files.write(cut, Arrays.copyOf(bytes, bytes.length - 4));
      e = refused(predict, cut);
      assertTrue(e.getMessage(), e.getMessage().contains("cut.safetensors"));

      // Every refusal left the variables as they were.
      assertArrayEquals(trained, predictBits(predict, xTest, 5));

      assertThrows(StagegraphException.class, () -> predict.loadVariables(null));
      assertThrows(StagegraphException.class, () -> predict.saveVariables(null));
      // A path in a directory that does not exist cannot be written: an error, not a crash.
      e = assertThrows(StagegraphException.class,
          () -> predict.saveVariables(work.resolve("no_dir").resolve("v.safetensors").toString()));
      assertTrue(e.getMessage(), e.getMessage().contains("no_dir"));
    }
    Session closed;
    try (Program p = load()) {
      closed = new Session(p, "predict");
      closed.close();
    }
    StagegraphException e = assertThrows(StagegraphException.class, () -> closed.saveVariables(saved.toString()));
    assertTrue(e.getMessage(), e.getMessage().contains("closed"));
  }
}
