package org.stagegraph;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Runs one entry point of a {@link Program}. Inputs are bound from tensors' direct
 * buffers without a copy and stay bound across runs; outputs are either copied out
 * after a run ({@link #output(int)}), read in place ({@link #outputView(int)}), or
 * written straight into a bound tensor ({@link #bindOutput(int, Tensor)}).
 *
 * <p>A session is used by one thread at a time; {@link #cancel()} may be called from
 * any thread. Close it when done: it holds the native session and its memory.
 */
public final class Session implements AutoCloseable {
  /** Options of a new session. */
  public static final class Options {
    int numThreads = 1;
    long memoryLimitBytes = 0;
    long runTimeoutMicros = 0;

    /** Threads of the session's pool, the caller's included (default 1). */
    public Options setNumThreads(int n) {
      numThreads = n;
      return this;
    }

    /** Activation memory the runs may hold at once; 0 (default): no limit. */
    public Options setMemoryLimitBytes(long bytes) {
      memoryLimitBytes = bytes;
      return this;
    }

    /** Wall time each run may take; 0 (default): none. */
    public Options setRunTimeoutMicros(long micros) {
      runTimeoutMicros = micros;
      return this;
    }
  }

  private final Program program;
  private final EntryPoint entry;
  private final Object lock = new Object();
  private long handle;
  private boolean running;
  // The bound tensors, referenced so that their buffers outlive the binding.
  private final Tensor[] inputs;
  private final Tensor[] outputs;

  public Session(Program program, String entry) {
    this(program, entry, new Options());
  }

  public Session(Program program, String entry, Options options) {
    this.program = program;
    this.entry = program.entry(entry);
    this.handle = NativeLib.sessionCreate(program.handle(), entry, options.numThreads, options.memoryLimitBytes,
        options.runTimeoutMicros);
    this.inputs = new Tensor[this.entry.inputs().size()];
    this.outputs = new Tensor[this.entry.outputs().size()];
  }

  public EntryPoint entry() {
    return entry;
  }

  public Program program() {
    return program;
  }

  /** Binds input {@code name} to the tensor's buffer, without a copy. */
  public void setInput(String name, Tensor tensor) {
    setInput(NativeLib.inputIndex(handle(), name), tensor);
  }

  public void setInput(int index, Tensor tensor) {
    ByteBuffer b = tensor.open();
    NativeLib.setInput(handle(), index, tensor.dtype().code(), tensor.shape(), b, tensor.byteSize());
    inputs[index] = tensor;
  }

  /**
   * Later runs write output {@code index} into the tensor's buffer (its capacity in
   * bytes must hold the output, else the run fails naming the bytes it needs);
   * null unbinds.
   */
  public void bindOutput(int index, Tensor tensor) {
    if (tensor == null) {
      NativeLib.bindOutput(handle(), index, null, 0);
    } else {
      NativeLib.bindOutput(handle(), index, tensor.open(), tensor.byteSize());
    }
    outputs[index] = tensor;
  }

  /** Runs the entry point on the bound inputs. */
  public void run() {
    long h;
    synchronized (lock) {
      h = handle();
      if (running) {
        throw new StagegraphException(StagegraphException.INVALID_ARGUMENT,
            "run() entered while another thread's run of this session is in progress");
      }
      running = true;
    }
    try {
      NativeLib.run(h);
    } finally {
      synchronized (lock) {
        running = false;
      }
    }
  }

  /**
   * Writes this session's variables (the program's {@code sg.variables}, as its
   * runs have left them) to {@code path} as safetensors, each named by its path
   * ({@code params.w1}). The file is written beside {@code path} and renamed into
   * place, so a crash leaves either the old file or the new one. A program without
   * variables writes a file with none.
   */
  public void saveVariables(String path) {
    NativeLib.saveVariables(handle(), path);
  }

  /**
   * Replaces this session's variables with those of the safetensors file at
   * {@code path} (as {@link #saveVariables} writes it, from a session of this
   * program on any entry point). Every name, dtype and shape is checked before
   * anything changes: a mismatch is INVALID_ARGUMENT naming the variable, a missing
   * file NOT_FOUND; either way the variables stay as they were.
   */
  public void loadVariables(String path) {
    NativeLib.loadVariables(handle(), path);
  }

  /**
   * Replaces this session's variables with copies of {@code other}'s, without a file:
   * how a {@code predict} session takes what a {@code train_step} session of the same
   * program learned. INVALID_ARGUMENT naming the first variable that differs.
   */
  public void copyVariablesFrom(Session other) {
    NativeLib.copyVariables(handle(), other.handle());
  }

  /** Ends the run in progress (or the next run) with CANCELLED. Any thread. */
  public void cancel() {
    synchronized (lock) {
      if (handle != 0) {
        NativeLib.cancel(handle);
      }
    }
  }

  /** Changes the wall-time limit of later runs (0: none). */
  public void setRunTimeoutMicros(long micros) {
    NativeLib.setRunTimeout(handle(), micros);
  }

  public int numOutputs() {
    return NativeLib.numOutputs(handle());
  }

  public int outputIndex(String name) {
    return NativeLib.outputIndex(handle(), name);
  }

  /** The dims of output {@code index} of the last run. */
  public long[] outputShape(int index) {
    return NativeLib.outputShape(handle(), index);
  }

  /** Output {@code index} of the last run, copied into a new tensor. */
  public Tensor output(int index) {
    long h = handle();
    DType dtype = DType.of(NativeLib.outputDtype(h, index));
    long[] shape = NativeLib.outputShape(h, index);
    Tensor t = Tensor.allocate(dtype, shape);
    t.buffer().put(NativeLib.outputView(h, index));
    return t;
  }

  public Tensor output(String name) {
    return output(outputIndex(name));
  }

  /**
   * Output {@code index} of the last run in place, read-only, without a copy: valid
   * only until the next run, bind or close of this session.
   */
  public ByteBuffer outputView(int index) {
    return NativeLib.outputView(handle(), index).asReadOnlyBuffer().order(ByteOrder.nativeOrder());
  }

  @Override
  public void close() {
    synchronized (lock) {
      if (running) {
        throw new StagegraphException(StagegraphException.INVALID_ARGUMENT,
            "close() while a run is in progress: cancel() it and let run() return first");
      }
      if (handle != 0) {
        NativeLib.sessionRelease(handle);
        handle = 0;
      }
    }
    java.util.Arrays.fill(inputs, null);
    java.util.Arrays.fill(outputs, null);
  }

  private long handle() {
    synchronized (lock) {
      if (handle == 0) {
        throw new StagegraphException(StagegraphException.INVALID_ARGUMENT, "the session is closed");
      }
      return handle;
    }
  }
}
