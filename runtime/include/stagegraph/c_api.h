/* Stagegraph C API: load a .sgraph file and run its entry points from C, JNI,
 * Python ctypes or any language with a C FFI. C99; no struct crosses it but the
 * one it hands custom kernels (sg_custom_kernel_call, read-only, sized).
 *
 *   sg_status* st = sg_status_create();
 *   sg_program* prog = NULL;
 *   if (sg_program_load_file("mlp.sgraph", 0, &prog, st) != SG_OK)
 *     fprintf(stderr, "%s\n", sg_status_message(st));
 *   sg_session* s = NULL;
 *   sg_session_create(prog, "mlp", NULL, &s, st);           // NULL: default options
 *   int64_t shape[2] = {1, 784};
 *   sg_session_set_input(s, "x", SG_F32, shape, 2, x, sizeof x, st);   // not copied
 *   if (sg_session_run(s, st) != SG_OK) ... sg_status_message(st) ...  // "FILE:LINE:COL: ..."
 *   const void* y; int32_t dtype; const int64_t* dims; size_t rank;
 *   sg_session_output(s, 0, &y, &dtype, &dims, &rank, st);  // in place, until the next run
 *   sg_session_release(s); sg_program_release(prog); sg_status_release(st);
 *
 * Errors. Every fallible function returns an sg_code (SG_OK = 0) and takes a last
 * `sg_status* status` argument, which may be NULL; when given, it receives the code
 * and a message naming what failed and where (reset to SG_OK on success). One
 * status object may be reused by any number of calls on one thread. Every pointer
 * argument is checked: NULL where an object is required is SG_INVALID_ARGUMENT,
 * never a crash. No C++ exception crosses this API.
 *
 * Threads. A program is immutable: any number of threads may use it and create
 * sessions on it. A session is used by one thread at a time; a second thread that
 * enters sg_session_run while a run is in progress gets SG_INVALID_ARGUMENT.
 * sg_session_cancel may be called from any thread at any time. A thread pool may
 * be shared by sessions running on different threads.
 *
 * Lifetimes. Objects are released with their *_release function (NULL is a no-op)
 * in any order: a session keeps its program and thread pool alive. Strings and
 * descriptions returned by a program (entry and tensor names, sg_entry,
 * sg_tensor_info) live as long as the program.
 *
 * ABI rules (as ONNX Runtime and TensorFlow Lite promise for theirs):
 *  - Append-only: functions and enum values are only ever added, never removed,
 *    renamed, renumbered or changed in signature or meaning. A function that must
 *    change gets a new name (a suffix _v2) and the old one keeps working.
 *  - Opaque handles only: no struct layout is part of the ABI; options are set
 *    through functions, never by filling a struct, so new options need no new
 *    layout and old binaries keep working with newer libraries. The one kind of
 *    struct that crosses it goes the other way: one the library fills and hands
 *    to a caller's callback by const pointer (sg_custom_kernel_call). Such a
 *    struct starts with its size in bytes, as the library filling it knows it;
 *    fields are only ever appended, never removed, reordered or retyped, so a
 *    callback built against an older header reads the prefix it knows, and one
 *    built against a newer header reads a later field only when struct_size
 *    covers it (SG_CALL_HAS(call, field)).
 *  - Fixed-width integers (int32_t, int64_t, uint64_t, size_t) in every signature;
 *    enums are passed as int32_t, so their size never depends on the compiler.
 *  - An unknown enum value or flag bit passed by a newer caller to an older
 *    library is SG_INVALID_ARGUMENT (or SG_UNSUPPORTED), never ignored silently.
 *  - SG_C_API_VERSION counts the additions; sg_c_api_version() tells a caller
 *    which functions the library it loaded has.
 *  - Only symbols prefixed sg_ are exported.
 */
#ifndef STAGEGRAPH_C_API_H_
#define STAGEGRAPH_C_API_H_

#include <stddef.h>
#include <stdint.h>

#include "stagegraph/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Incremented with every addition to this header. */
#define SG_C_API_VERSION 5

/* ---- Status codes (the same numbers as sg::StatusCode) ---------------------- */
typedef int32_t sg_code;
enum {
  SG_OK = 0,
  SG_INVALID_ARGUMENT = 1, /* the API was misused: NULL, unknown entry, bad index, run() reentered */
  SG_INVALID_GRAPH = 2,    /* the graph file is malformed, corrupt, too new, or uses unknown ops */
  SG_INVALID_INPUT = 3,    /* an input is missing, unknown, or has the wrong dtype or shape */
  SG_RUNTIME_ERROR = 4,    /* found while running: shape, index, arithmetic, a failed assert */
  SG_LIMIT_EXCEEDED = 5,   /* call depth, or the session's memory limit */
  SG_OUT_OF_MEMORY = 6,    /* the host allocator failed */
  SG_CANCELLED = 7,        /* sg_session_cancel ended the run */
  SG_UNSUPPORTED = 8,      /* a valid request this build cannot serve (e.g. a device) */
  SG_INTERNAL = 9,         /* a broken invariant: please report it */
  SG_DEADLINE_EXCEEDED = 10, /* the run's timeout passed */
  SG_NOT_FOUND = 11          /* (SG_C_API_VERSION 3) the graph file does not exist */
};

/* ---- Element types (the same numbers as sg::DType and the graph schema) ----- */
typedef int32_t sg_dtype;
enum { SG_F32 = 0, SG_F16 = 1, SG_I32 = 2, SG_I64 = 3, SG_BOOL = 4 };

/* Bytes per element (0 for an unknown dtype) and its name ("f32", ...; "?"). */
SG_API size_t sg_dtype_size(sg_dtype dtype);
SG_API const char* sg_dtype_name(sg_dtype dtype);

/* ---- Opaque handles ----------------------------------------------------------- */
typedef struct sg_status sg_status;
typedef struct sg_program sg_program;
typedef struct sg_entry sg_entry;             /* borrowed from its program */
typedef struct sg_tensor_info sg_tensor_info; /* borrowed from its program */
typedef struct sg_thread_pool sg_thread_pool;
typedef struct sg_session_options sg_session_options;
typedef struct sg_session sg_session;

/* ---- Versions ----------------------------------------------------------------- */
/* The library's version, "MAJOR.MINOR.PATCH", and as MAJOR * 10000 + MINOR * 100 + PATCH. */
SG_API const char* sg_version_string(void);
SG_API uint32_t sg_version(void);
/* SG_C_API_VERSION of the library (which may be newer than the header compiled against). */
SG_API uint32_t sg_c_api_version(void);
/* The graph file format versions this library reads: major version `major`, any
 * minor version up to `max_minor` (a file of a newer minor version whose additions
 * it does not use also loads). */
SG_API void sg_format_versions(uint16_t* major, uint16_t* max_minor);

/* ---- Status ------------------------------------------------------------------- */
/* NULL only when memory is exhausted. */
SG_API sg_status* sg_status_create(void);
SG_API void sg_status_release(sg_status* status);
/* SG_OK for NULL. */
SG_API sg_code sg_status_code(const sg_status* status);
/* "" when OK or for NULL; valid until the status is next written or released. */
SG_API const char* sg_status_message(const sg_status* status);
/* "ok", "invalid argument", ..., "not found"; "?" for an unknown code. */
SG_API const char* sg_code_name(sg_code code);

/* ---- Programs ----------------------------------------------------------------- */
/* Load flags (bits; any other bit is SG_INVALID_ARGUMENT). Every load checks the
 * header, the table's CRC-32 and the data segment's checksum (XXH3-64, at memory
 * speed: a changed weight is SG_INVALID_GRAPH) unless SG_LOAD_NO_VERIFY_DATA says
 * otherwise; flags 0 is the checked load. */
enum {
  SG_LOAD_VERIFY_DATA = 1,   /* check the data segment's checksum: the default (before
                                SG_C_API_VERSION 3 only this flag asked for it) */
  SG_LOAD_COPY = 2,          /* sg_program_load_memory: always copy the bytes */
  SG_LOAD_NO_VERIFY_DATA = 4 /* (SG_C_API_VERSION 3) skip the data checksum, for a
                                caller that verified the file itself; with
                                SG_LOAD_VERIFY_DATA: SG_INVALID_ARGUMENT */
};

/* Memory-maps the file; constants are used in place from the map. */
SG_API sg_code sg_program_load_file(const char* path, uint32_t flags, sg_program** out, sg_status* status);
/* Without SG_LOAD_COPY, bytes that are 64-byte aligned are used in place and the
 * caller keeps them alive and unchanged until the program is released (every
 * session holds it); misaligned bytes are copied once. With SG_LOAD_COPY the
 * bytes may be freed as soon as this returns. */
SG_API sg_code sg_program_load_memory(const void* data, size_t size, uint32_t flags, sg_program** out,
                                      sg_status* status);
/* The graph is the `length` bytes at `offset` of the open file `fd` (a graph stored
 * uncompressed inside an Android APK: AssetFileDescriptor's descriptor, start offset
 * and length); length 0: to the end of the file. The range is memory-mapped (or
 * copied when `offset` is not a multiple of 64); the descriptor is not closed and
 * may be closed as soon as this returns. */
SG_API sg_code sg_program_load_fd(int fd, uint64_t offset, uint64_t length, uint32_t flags, sg_program** out,
                                  sg_status* status);
SG_API void sg_program_release(sg_program* program);

/* The file format version of this program. */
SG_API void sg_program_format_version(const sg_program* program, uint16_t* major, uint16_t* minor);

/* ---- Entry points and their signatures ----------------------------------------- */
/* 0 for NULL. Entries by index, or by name (NULL when there is none). */
SG_API size_t sg_program_num_entries(const sg_program* program);
SG_API const sg_entry* sg_program_entry(const sg_program* program, size_t index);
SG_API const sg_entry* sg_program_find_entry(const sg_program* program, const char* name);

SG_API const char* sg_entry_name(const sg_entry* entry);
SG_API size_t sg_entry_num_inputs(const sg_entry* entry);
SG_API size_t sg_entry_num_outputs(const sg_entry* entry);
/* NULL for an index out of range. */
SG_API const sg_tensor_info* sg_entry_input(const sg_entry* entry, size_t index);
SG_API const sg_tensor_info* sg_entry_output(const sg_entry* entry, size_t index);

SG_API const char* sg_tensor_info_name(const sg_tensor_info* info);
SG_API sg_dtype sg_tensor_info_dtype(const sg_tensor_info* info);
SG_API size_t sg_tensor_info_rank(const sg_tensor_info* info);
/* The size of a static dim; -1 for a symbolic dim (or an axis out of range). */
SG_API int64_t sg_tensor_info_dim(const sg_tensor_info* info, size_t axis);
/* The name of a symbolic dim ("N"); "" for a static dim or an axis out of range. */
SG_API const char* sg_tensor_info_dim_name(const sg_tensor_info* info, size_t axis);

/* ---- Thread pools ---------------------------------------------------------------- */
/* A pool of `num_threads` threads (the caller's included: 1 to 256) that several
 * sessions share (sg_session_options_set_thread_pool), so that N sessions on C
 * cores use C threads, not N times their own. One run uses the pool at a time;
 * runs of other sessions that want it meanwhile run on their own thread. */
SG_API sg_code sg_thread_pool_create(int32_t num_threads, sg_thread_pool** out, sg_status* status);
SG_API void sg_thread_pool_release(sg_thread_pool* pool);

/* ---- Session options --------------------------------------------------------------- */
SG_API sg_code sg_session_options_create(sg_session_options** out, sg_status* status);
SG_API void sg_session_options_release(sg_session_options* options);

/* Threads of the session's own pool, the caller's included (default 1; 1 to 256).
 * Ignored when a shared pool is set. */
SG_API sg_code sg_session_options_set_num_threads(sg_session_options* options, int32_t num_threads,
                                                  sg_status* status);
/* Active graph Call frames a run may hold (default 10000); deeper: SG_LIMIT_EXCEEDED. */
SG_API sg_code sg_session_options_set_max_call_depth(sg_session_options* options, int32_t depth,
                                                     sg_status* status);
/* Bytes of activation memory (frame arenas, tensors, frame stacks, cached buffers) the
 * session's runs may hold at once; 0 (default): no limit. Exceeding it ends the run
 * with SG_LIMIT_EXCEEDED naming the op and its FILE:LINE:COL. */
SG_API sg_code sg_session_options_set_memory_limit(sg_session_options* options, uint64_t bytes,
                                                   sg_status* status);
/* Wall time each run may take, in microseconds; 0 (default): none. A run past it
 * ends with SG_DEADLINE_EXCEEDED naming where it stopped, as promptly as
 * sg_session_cancel would end it (the session's own timer thread raises the same
 * flag at the deadline), whatever the number of nodes. */
SG_API sg_code sg_session_options_set_run_timeout_us(sg_session_options* options, uint64_t microseconds,
                                                     sg_status* status);
/* Runs use `pool` (held by the session) instead of a pool of their own; NULL: own pool. */
SG_API sg_code sg_session_options_set_thread_pool(sg_session_options* options, sg_thread_pool* pool,
                                                  sg_status* status);
/* "cpu" (default), "test" (the test device: host memory behind the device
 * interface, for testing), "cuda" or "cuda:N". A device this library lacks is
 * SG_UNSUPPORTED, naming the devices it has (the C API links no device library, so
 * "cuda" is one: a CUDA device is reached from C++, sg::cuda_device); a malformed
 * string is SG_INVALID_ARGUMENT. */
SG_API sg_code sg_session_options_set_device(sg_session_options* options, const char* device, sg_status* status);

/* Text a run writes: a graph print (SG_TEXT_PRINT: one line, without its newline) or
 * a diagnostic (SG_TEXT_DIAGNOSTIC: a failed assert or run error, as
 * "FILE:LINE:COL: error: MESSAGE"). `text` is valid during the call only and is not
 * NUL-terminated. The callback runs on the thread calling sg_session_run; it must
 * not call back into the same session. */
enum { SG_TEXT_PRINT = 0, SG_TEXT_DIAGNOSTIC = 1 };
typedef void (*sg_text_callback)(void* user, int32_t kind, const char* text, size_t length);
/* NULL (default): prints to stdout; diagnostics are only returned in the status. */
SG_API sg_code sg_session_options_set_text_callback(sg_session_options* options, sg_text_callback callback,
                                                    void* user, sg_status* status);

/* ---- Custom ops (SG_C_API_VERSION 2) ------------------------------------------------- */
/* Kernels for the custom ops a graph declares (sg.custom_op("my_ns.swish", ...) in the
 * staged program). A kernel reads `num_inputs` dense C-order operands and writes the
 * output, already allocated with the dtype and dims the compiler recorded (checked
 * against the compiled rule before each call) and zero-filled, all of it; it returns
 * SG_OK, or an error code with `message` (a NUL-terminated string the kernel keeps
 * alive, or NULL), which ends the run with that code naming the op and its line.
 * It runs on the thread calling sg_session_run, one call at a time per session.
 *
 * (SG_C_API_VERSION 4) The kernel gets its operands as one struct, which later
 * versions may extend at its end (see the ABI rules above); the pointers in it
 * are valid during the call only. */
typedef struct sg_custom_kernel_call {
  size_t struct_size;                 /* sizeof(sg_custom_kernel_call) of the library */
  const char* name;                   /* the op's name, "my_ns.swish" */
  size_t num_inputs;
  const void* const* inputs;          /* num_inputs operands, C order */
  const sg_dtype* input_dtypes;       /* num_inputs dtypes */
  const int64_t* const* input_dims;   /* num_inputs arrays of input_ranks[i] dims */
  const size_t* input_ranks;          /* num_inputs ranks */
  void* output;                       /* zero-filled; the kernel writes all of it */
  sg_dtype output_dtype;
  const int64_t* output_dims;         /* output_rank dims */
  size_t output_rank;
} sg_custom_kernel_call;
/* Whether `call` (an sg_custom_kernel_call*) has `field`: a library older than the
 * header a kernel was built against fills only the fields it knows. */
#define SG_CALL_HAS(call, field) \
  (offsetof(sg_custom_kernel_call, field) + sizeof((call)->field) <= (call)->struct_size)
typedef sg_code (*sg_custom_kernel_v2)(void* user, const sg_custom_kernel_call* call, const char** message);

typedef struct sg_custom_ops sg_custom_ops;
SG_API sg_code sg_custom_ops_create(sg_custom_ops** out, sg_status* status);
/* Sessions given the registry keep it alive; release it whenever. */
SG_API void sg_custom_ops_release(sg_custom_ops* ops);
/* (SG_C_API_VERSION 4) Adds the kernel of custom op `name`. SG_INVALID_ARGUMENT
 * for an empty name, a NULL kernel or a name already added. */
SG_API sg_code sg_custom_ops_add_v2(sg_custom_ops* ops, const char* name, sg_custom_kernel_v2 kernel, void* user,
                                    sg_status* status);

/* Deprecated (kept for the ABI; use sg_custom_ops_add_v2): the same kernel with its
 * operands as eleven parameters, the fields of sg_custom_kernel_call but the name. */
typedef sg_code (*sg_custom_kernel)(void* user, size_t num_inputs, const void* const* inputs,
                                    const sg_dtype* input_dtypes, const int64_t* const* input_dims,
                                    const size_t* input_ranks, void* output, sg_dtype output_dtype,
                                    const int64_t* output_dims, size_t output_rank, const char** message);
SG_API sg_code sg_custom_ops_add(sg_custom_ops* ops, const char* name, sg_custom_kernel kernel, void* user,
                                 sg_status* status);
/* A session whose entry reaches (through if, while and call) a custom op missing
 * here fails to be created with SG_INVALID_ARGUMENT, naming the op and its line;
 * custom ops only other entries reach need no kernel. */
SG_API sg_code sg_session_options_set_custom_ops(sg_session_options* options, sg_custom_ops* ops,
                                                 sg_status* status);

/* ---- Sessions ------------------------------------------------------------------------ */
/* A session runs entry point `entry` of `program`; `options` may be NULL (defaults)
 * and is copied. Unknown entry: SG_INVALID_ARGUMENT naming the entries there are. */
SG_API sg_code sg_session_create(const sg_program* program, const char* entry, const sg_session_options* options,
                                 sg_session** out, sg_status* status);
SG_API void sg_session_release(sg_session* session);
SG_API const sg_entry* sg_session_entry(const sg_session* session);

/* Input and output positions by name. An unknown input is SG_INVALID_INPUT with the
 * message sg_session_set_input gives for it ("unknown input 'q' (the entry takes:
 * x, y)"); an unknown output SG_INVALID_ARGUMENT, naming the outputs there are. */
SG_API sg_code sg_session_input_index(const sg_session* session, const char* name, size_t* index,
                                      sg_status* status);
SG_API sg_code sg_session_output_index(const sg_session* session, const char* name, size_t* index,
                                       sg_status* status);

/* Binds an input to `nbytes` of caller memory at `data`, C order, without a copy.
 * The memory must stay valid until this input is bound again or the session is
 * released. Each run reads it afresh and never writes it: its contents may change
 * between runs (never during one), and the next run sees the new values without a
 * new bind, as a loop refilling one buffer wants; the dims stay the ones given. dtype, rank and static dims must match the signature, and
 * symbolic dims agree among the inputs (SG_INVALID_INPUT naming the input);
 * nbytes must equal the product of the dims times the dtype's size. Inputs stay
 * bound across runs. */
SG_API sg_code sg_session_set_input(sg_session* session, const char* name, sg_dtype dtype, const int64_t* shape,
                                    size_t rank, const void* data, size_t nbytes, sg_status* status);
SG_API sg_code sg_session_set_input_at(sg_session* session, size_t index, sg_dtype dtype, const int64_t* shape,
                                       size_t rank, const void* data, size_t nbytes, sg_status* status);

/* Output `index` of each later run is written into `capacity` bytes at `data`
 * (caller memory, C order); a run whose output does not fit fails with
 * SG_INVALID_ARGUMENT naming the output and the bytes it needs. sg_session_output
 * then points into `data`. `data` NULL unbinds. */
SG_API sg_code sg_session_bind_output(sg_session* session, size_t index, void* data, size_t capacity,
                                      sg_status* status);

/* Runs the entry point. SG_INVALID_INPUT: an input is missing or inputs disagree;
 * failures while running: SG_RUNTIME_ERROR, SG_LIMIT_EXCEEDED, SG_OUT_OF_MEMORY,
 * SG_CANCELLED, SG_DEADLINE_EXCEEDED with "FILE:LINE:COL: error: MESSAGE". The
 * session stays usable after any failure. */
SG_API sg_code sg_session_run(sg_session* session, sg_status* status);

/* (SG_C_API_VERSION 5) The session's variables (sg.variables, SPEC §12): each
 * session holds its own, starting from the file's values; a run reads them as they
 * were when it started and stores its assignments only when it succeeds. save
 * writes safetensors named by path, atomically (a temporary file renamed into
 * place); load checks every name, dtype and shape before it changes anything
 * (SG_INVALID_ARGUMENT naming the mismatch; SG_NOT_FOUND for a missing file). */
SG_API sg_code sg_session_save_variables(const sg_session* session, const char* path, sg_status* status);
SG_API sg_code sg_session_load_variables(sg_session* session, const char* path, sg_status* status);
/* (SG_C_API_VERSION 5) `session`'s variables become copies of `from`'s (another
 * entry's session of the same program, or of a program with the same variables),
 * all at once; SG_INVALID_ARGUMENT naming the first variable that differs. */
SG_API sg_code sg_session_copy_variables(sg_session* session, const sg_session* from, sg_status* status);

/* Ends the run in progress at its next check (between nodes, at loop back-edges
 * and call entries, and inside long kernels between the blocks of rows they split
 * their work into) with SG_CANCELLED; when no run is in progress, the next run
 * ends that way as soon as it starts (so a cancel racing with the start of a run
 * is never lost). Each run's end clears the request. Any thread, any time. */
SG_API void sg_session_cancel(sg_session* session);

/* Changes the run timeout of later runs (see sg_session_options_set_run_timeout_us). */
SG_API sg_code sg_session_set_run_timeout_us(sg_session* session, uint64_t microseconds, sg_status* status);

SG_API size_t sg_session_num_outputs(const sg_session* session);
/* Output `index` of the last successful run, in place: `data` points to its bytes
 * (C order), `shape` to its `rank` dims; both valid until the next run, bind or
 * release. Any of the out pointers may be NULL. SG_INVALID_ARGUMENT for an index
 * out of range, or when no run has succeeded since the session was created or
 * its last failed run. */
SG_API sg_code sg_session_output(const sg_session* session, size_t index, const void** data, sg_dtype* dtype,
                                 const int64_t** shape, size_t* rank, sg_status* status);
/* Bytes of output `index` (0 where sg_session_output would fail). */
SG_API size_t sg_session_output_nbytes(const sg_session* session, size_t index);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STAGEGRAPH_C_API_H_ */
