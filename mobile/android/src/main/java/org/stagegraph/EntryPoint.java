package org.stagegraph;

import java.util.Collections;
import java.util.List;

/** An entry point of a program: its name and its inputs' and outputs' specs. */
public final class EntryPoint {
  private final String name;
  private final List<TensorSpec> inputs;
  private final List<TensorSpec> outputs;

  EntryPoint(String name, List<TensorSpec> inputs, List<TensorSpec> outputs) {
    this.name = name;
    this.inputs = Collections.unmodifiableList(inputs);
    this.outputs = Collections.unmodifiableList(outputs);
  }

  public String name() {
    return name;
  }

  public List<TensorSpec> inputs() {
    return inputs;
  }

  public List<TensorSpec> outputs() {
    return outputs;
  }

  /** "mlp(x: f32[N, 784], ...) -> (y: f32[N, 10])". */
  @Override
  public String toString() {
    StringBuilder s = new StringBuilder(name).append('(');
    for (int i = 0; i < inputs.size(); ++i) {
      s.append(i > 0 ? ", " : "").append(inputs.get(i));
    }
    s.append(") -> (");
    for (int i = 0; i < outputs.size(); ++i) {
      s.append(i > 0 ? ", " : "").append(outputs.get(i));
    }
    return s.append(')').toString();
  }
}
