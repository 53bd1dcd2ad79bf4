package org.stagegraph;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;

import java.io.IOException;
import java.nio.file.Path;
import org.junit.Test;

/** examples/mlp.py through the Java API, against eager mode's outputs on the same inputs. */
public class MlpTest {
  @Test
  public void matchesEagerMode() throws IOException {
    Path in = TestFiles.path("mlp-in");
    try (Program p = Program.fromFile(TestFiles.path("mlp.sgraph").toString());
        Session s = new Session(p, "mlp", new Session.Options().setNumThreads(2))) {
      for (TensorSpec spec : s.entry().inputs()) {
        s.setInput(spec.name(), TestFiles.readNpy(in.resolve(spec.name() + ".npy")));
      }
      s.run();
      TensorSpec outSpec = s.entry().outputs().get(0);
      Tensor expected = TestFiles.readNpy(TestFiles.path("mlp-eager").resolve(outSpec.name() + ".npy"));
      Tensor actual = s.output(0);
      assertArrayEquals(expected.shape(), actual.shape());
      float[] e = expected.toFloatArray();
      float[] a = actual.toFloatArray();
      assertEquals(e.length, a.length);
      for (int i = 0; i < e.length; ++i) {
        // SPEC §1's tolerance for f32: 1e-5 relative plus 1e-6 absolute, loosened for summation order.
        assertEquals("element " + i, e[i], a[i], 1e-6f + 1e-4f * Math.abs(e[i]));
      }
    }
  }
}
