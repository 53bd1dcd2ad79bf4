/* JNI functions of org.stagegraph.NativeLib over the C API (stagegraph/c_api.h).
 * Every failure is thrown as org.stagegraph.StagegraphException(code, message);
 * nothing here keeps state besides the classes cached in JNI_OnLoad. The library
 * exports only these Java_* functions and JNI_OnLoad (jni.map). */
#include <jni.h>
#include <stdint.h>
#include <string.h>

#include "stagegraph/c_api.h"

#define SG_JNI(name) JNICALL Java_org_stagegraph_NativeLib_##name

static jclass g_exception;  /* org.stagegraph.StagegraphException (global ref) */
static jmethodID g_exception_init;
static jclass g_string;
static jfieldID g_fd_field; /* java.io.FileDescriptor.fd */

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void* reserved) {
  (void)reserved;
  JNIEnv* env = NULL;
  if ((*vm)->GetEnv(vm, (void**)&env, JNI_VERSION_1_6) != JNI_OK) return JNI_ERR;
  jclass c = (*env)->FindClass(env, "org/stagegraph/StagegraphException");
  if (c == NULL) return JNI_ERR;
  g_exception = (jclass)(*env)->NewGlobalRef(env, c);
  g_exception_init = (*env)->GetMethodID(env, c, "<init>", "(ILjava/lang/String;)V");
  jclass s = (*env)->FindClass(env, "java/lang/String");
  if (s == NULL || g_exception_init == NULL) return JNI_ERR;
  g_string = (jclass)(*env)->NewGlobalRef(env, s);
  jclass fd = (*env)->FindClass(env, "java/io/FileDescriptor");
  if (fd == NULL) return JNI_ERR;
  g_fd_field = (*env)->GetFieldID(env, fd, "fd", "I");
  if (g_fd_field == NULL) return JNI_ERR;
  return JNI_VERSION_1_6;
}

static void throw_error(JNIEnv* env, sg_code code, const char* message) {
  if ((*env)->ExceptionCheck(env)) return; /* one already pending (an OutOfMemoryError) */
  jstring text = (*env)->NewStringUTF(env, message != NULL ? message : "");
  if (text == NULL) return;
  jobject e = (*env)->NewObject(env, g_exception, g_exception_init, (jint)code, text);
  if (e != NULL) (*env)->Throw(env, (jthrowable)e);
}

/* Throws the status's error; returns 1 when there was one. */
static int failed(JNIEnv* env, sg_code code, sg_status* st) {
  if (code == SG_OK) return 0;
  throw_error(env, code, st != NULL ? sg_status_message(st) : sg_code_name(code));
  return 1;
}

static sg_status* new_status(JNIEnv* env) {
  sg_status* st = sg_status_create();
  if (st == NULL) throw_error(env, SG_OUT_OF_MEMORY, "out of memory creating a status");
  return st;
}

static jlong to_handle(const void* p) { return (jlong)(intptr_t)p; }
#define PROGRAM(h) ((sg_program*)(intptr_t)(h))
#define SESSION(h) ((sg_session*)(intptr_t)(h))

static int check_handle(JNIEnv* env, jlong h, const char* what) {
  if (h != 0) return 1;
  throw_error(env, SG_INVALID_ARGUMENT, what);
  return 0;
}

/* ---- versions and names ---------------------------------------------------------- */
JNIEXPORT jstring SG_JNI(versionString)(JNIEnv* env, jclass cls) {
  (void)cls;
  return (*env)->NewStringUTF(env, sg_version_string());
}

JNIEXPORT jstring SG_JNI(codeName)(JNIEnv* env, jclass cls, jint code) {
  (void)cls;
  return (*env)->NewStringUTF(env, sg_code_name((sg_code)code));
}

/* ---- programs ------------------------------------------------------------------------ */
/* The C API checks the data segment unless told not to. */
static uint32_t load_flags(jboolean verify, jboolean copy) {
  return (verify ? 0u : SG_LOAD_NO_VERIFY_DATA) | (copy ? SG_LOAD_COPY : 0u);
}

JNIEXPORT jlong SG_JNI(loadFile)(JNIEnv* env, jclass cls, jstring path, jboolean verify) {
  (void)cls;
  if (path == NULL) {
    throw_error(env, SG_INVALID_ARGUMENT, "the path is null");
    return 0;
  }
  const char* p = (*env)->GetStringUTFChars(env, path, NULL);
  if (p == NULL) return 0;
  sg_status* st = new_status(env);
  sg_program* prog = NULL;
  const sg_code code = st != NULL ? sg_program_load_file(p, load_flags(verify, 0), &prog, st) : SG_OUT_OF_MEMORY;
  (*env)->ReleaseStringUTFChars(env, path, p);
  if (st != NULL) failed(env, code, st);
  sg_status_release(st);
  return code == SG_OK ? to_handle(prog) : 0;
}

JNIEXPORT jlong SG_JNI(loadDirect)(JNIEnv* env, jclass cls, jobject buffer, jint position, jint size,
                                   jboolean copy, jboolean verify) {
  (void)cls;
  const uint8_t* base = buffer != NULL ? (const uint8_t*)(*env)->GetDirectBufferAddress(env, buffer) : NULL;
  const jlong capacity = buffer != NULL ? (*env)->GetDirectBufferCapacity(env, buffer) : -1;
  if (base == NULL || position < 0 || size < 0 || (jlong)position + size > capacity) {
    throw_error(env, SG_INVALID_ARGUMENT, "loadDirect: not a direct buffer, or the range is outside it");
    return 0;
  }
  sg_status* st = new_status(env);
  if (st == NULL) return 0;
  sg_program* prog = NULL;
  const sg_code code = sg_program_load_memory(base + position, (size_t)size, load_flags(verify, copy), &prog, st);
  failed(env, code, st);
  sg_status_release(st);
  return code == SG_OK ? to_handle(prog) : 0;
}

JNIEXPORT jlong SG_JNI(loadBytes)(JNIEnv* env, jclass cls, jbyteArray bytes, jint offset, jint size,
                                  jboolean verify) {
  (void)cls;
  if (bytes == NULL || offset < 0 || size < 0 || (jlong)offset + size > (*env)->GetArrayLength(env, bytes)) {
    throw_error(env, SG_INVALID_ARGUMENT, "loadBytes: null array, or the range is outside it");
    return 0;
  }
  sg_status* st = new_status(env);
  if (st == NULL) return 0;
  /* Copied by the loader (SG_LOAD_COPY) while the array is pinned. */
  uint8_t* data = (uint8_t*)(*env)->GetPrimitiveArrayCritical(env, bytes, NULL);
  if (data == NULL) {
    sg_status_release(st);
    return 0;
  }
  sg_program* prog = NULL;
  const sg_code code = sg_program_load_memory(data + offset, (size_t)size, load_flags(verify, 1), &prog, st);
  (*env)->ReleasePrimitiveArrayCritical(env, bytes, data, JNI_ABORT);
  failed(env, code, st);
  sg_status_release(st);
  return code == SG_OK ? to_handle(prog) : 0;
}

JNIEXPORT jlong SG_JNI(loadFd)(JNIEnv* env, jclass cls, jint fd, jlong offset, jlong length, jboolean verify) {
  (void)cls;
  if (offset < 0 || length < 0) {
    throw_error(env, SG_INVALID_ARGUMENT, "loadFd: negative offset or length");
    return 0;
  }
  sg_status* st = new_status(env);
  if (st == NULL) return 0;
  sg_program* prog = NULL;
  const sg_code code =
      sg_program_load_fd((int)fd, (uint64_t)offset, (uint64_t)length, load_flags(verify, 0), &prog, st);
  failed(env, code, st);
  sg_status_release(st);
  return code == SG_OK ? to_handle(prog) : 0;
}

JNIEXPORT jint SG_JNI(fdOf)(JNIEnv* env, jclass cls, jobject fd) {
  (void)cls;
  if (fd == NULL) {
    throw_error(env, SG_INVALID_ARGUMENT, "the file descriptor is null");
    return -1;
  }
  return (*env)->GetIntField(env, fd, g_fd_field);
}

JNIEXPORT void SG_JNI(programRelease)(JNIEnv* env, jclass cls, jlong program) {
  (void)env, (void)cls;
  sg_program_release(PROGRAM(program));
}

JNIEXPORT jint SG_JNI(numEntries)(JNIEnv* env, jclass cls, jlong program) {
  (void)cls;
  if (!check_handle(env, program, "the program is closed")) return 0;
  return (jint)sg_program_num_entries(PROGRAM(program));
}

static const sg_entry* entry_at(JNIEnv* env, jlong program, jint entry) {
  const sg_entry* e = program != 0 && entry >= 0 ? sg_program_entry(PROGRAM(program), (size_t)entry) : NULL;
  if (e == NULL) throw_error(env, SG_INVALID_ARGUMENT, "no such entry point index");
  return e;
}

static const sg_tensor_info* tensor_at(JNIEnv* env, jlong program, jint entry, jboolean outputs, jint index) {
  const sg_entry* e = entry_at(env, program, entry);
  if (e == NULL) return NULL;
  const sg_tensor_info* t =
      index < 0 ? NULL : outputs ? sg_entry_output(e, (size_t)index) : sg_entry_input(e, (size_t)index);
  if (t == NULL) throw_error(env, SG_INVALID_ARGUMENT, "no such input or output index");
  return t;
}

JNIEXPORT jstring SG_JNI(entryName)(JNIEnv* env, jclass cls, jlong program, jint entry) {
  (void)cls;
  const sg_entry* e = entry_at(env, program, entry);
  return e != NULL ? (*env)->NewStringUTF(env, sg_entry_name(e)) : NULL;
}

JNIEXPORT jint SG_JNI(numTensors)(JNIEnv* env, jclass cls, jlong program, jint entry, jboolean outputs) {
  (void)cls;
  const sg_entry* e = entry_at(env, program, entry);
  if (e == NULL) return 0;
  return (jint)(outputs ? sg_entry_num_outputs(e) : sg_entry_num_inputs(e));
}

JNIEXPORT jstring SG_JNI(tensorName)(JNIEnv* env, jclass cls, jlong program, jint entry, jboolean outputs,
                                     jint index) {
  (void)cls;
  const sg_tensor_info* t = tensor_at(env, program, entry, outputs, index);
  return t != NULL ? (*env)->NewStringUTF(env, sg_tensor_info_name(t)) : NULL;
}

JNIEXPORT jint SG_JNI(tensorDtype)(JNIEnv* env, jclass cls, jlong program, jint entry, jboolean outputs,
                                   jint index) {
  (void)cls;
  const sg_tensor_info* t = tensor_at(env, program, entry, outputs, index);
  return t != NULL ? (jint)sg_tensor_info_dtype(t) : 0;
}

JNIEXPORT jlongArray SG_JNI(tensorShape)(JNIEnv* env, jclass cls, jlong program, jint entry, jboolean outputs,
                                         jint index) {
  (void)cls;
  const sg_tensor_info* t = tensor_at(env, program, entry, outputs, index);
  if (t == NULL) return NULL;
  const size_t rank = sg_tensor_info_rank(t);
  jlongArray out = (*env)->NewLongArray(env, (jsize)rank);
  for (size_t d = 0; out != NULL && d < rank; ++d) {
    const jlong v = (jlong)sg_tensor_info_dim(t, d);
    (*env)->SetLongArrayRegion(env, out, (jsize)d, 1, &v);
  }
  return out;
}

JNIEXPORT jobjectArray SG_JNI(tensorDimNames)(JNIEnv* env, jclass cls, jlong program, jint entry,
                                              jboolean outputs, jint index) {
  (void)cls;
  const sg_tensor_info* t = tensor_at(env, program, entry, outputs, index);
  if (t == NULL) return NULL;
  const size_t rank = sg_tensor_info_rank(t);
  jobjectArray out = (*env)->NewObjectArray(env, (jsize)rank, g_string, NULL);
  for (size_t d = 0; out != NULL && d < rank; ++d) {
    jstring name = (*env)->NewStringUTF(env, sg_tensor_info_dim_name(t, d));
    if (name == NULL) return NULL;
    (*env)->SetObjectArrayElement(env, out, (jsize)d, name);
    (*env)->DeleteLocalRef(env, name);
  }
  return out;
}

/* ---- sessions ------------------------------------------------------------------------ */
JNIEXPORT jlong SG_JNI(sessionCreate)(JNIEnv* env, jclass cls, jlong program, jstring entry, jint num_threads,
                                      jlong memory_limit, jlong run_timeout_us) {
  (void)cls;
  if (!check_handle(env, program, "the program is closed")) return 0;
  if (entry == NULL || memory_limit < 0 || run_timeout_us < 0) {
    throw_error(env, SG_INVALID_ARGUMENT, "sessionCreate: null entry name, or a negative limit");
    return 0;
  }
  sg_status* st = new_status(env);
  if (st == NULL) return 0;
  sg_session_options* options = NULL;
  sg_session* session = NULL;
  sg_code code = sg_session_options_create(&options, st);
  if (code == SG_OK) code = sg_session_options_set_num_threads(options, (int32_t)num_threads, st);
  if (code == SG_OK) code = sg_session_options_set_memory_limit(options, (uint64_t)memory_limit, st);
  if (code == SG_OK) code = sg_session_options_set_run_timeout_us(options, (uint64_t)run_timeout_us, st);
  if (code == SG_OK) {
    const char* name = (*env)->GetStringUTFChars(env, entry, NULL);
    if (name == NULL) {
      sg_session_options_release(options);
      sg_status_release(st);
      return 0;
    }
    code = sg_session_create(PROGRAM(program), name, options, &session, st);
    (*env)->ReleaseStringUTFChars(env, entry, name);
  }
  sg_session_options_release(options);
  failed(env, code, st);
  sg_status_release(st);
  return code == SG_OK ? to_handle(session) : 0;
}

JNIEXPORT void SG_JNI(sessionRelease)(JNIEnv* env, jclass cls, jlong session) {
  (void)env, (void)cls;
  sg_session_release(SESSION(session));
}

static jint index_of(JNIEnv* env, jlong session, jstring name, int outputs) {
  if (!check_handle(env, session, "the session is closed")) return -1;
  if (name == NULL) {
    throw_error(env, SG_INVALID_ARGUMENT, "the name is null");
    return -1;
  }
  sg_status* st = new_status(env);
  if (st == NULL) return -1;
  const char* n = (*env)->GetStringUTFChars(env, name, NULL);
  size_t index = 0;
  sg_code code = SG_OUT_OF_MEMORY;
  if (n != NULL) {
    code = outputs ? sg_session_output_index(SESSION(session), n, &index, st)
                   : sg_session_input_index(SESSION(session), n, &index, st);
    (*env)->ReleaseStringUTFChars(env, name, n);
    failed(env, code, st);
  }
  sg_status_release(st);
  return code == SG_OK ? (jint)index : -1;
}

JNIEXPORT jint SG_JNI(inputIndex)(JNIEnv* env, jclass cls, jlong session, jstring name) {
  (void)cls;
  return index_of(env, session, name, 0);
}

JNIEXPORT jint SG_JNI(outputIndex)(JNIEnv* env, jclass cls, jlong session, jstring name) {
  (void)cls;
  return index_of(env, session, name, 1);
}

/* A direct buffer's address and capacity, or an INVALID_ARGUMENT thrown. */
static void* direct_address(JNIEnv* env, jobject buffer, jlong need, const char* what) {
  void* p = buffer != NULL ? (*env)->GetDirectBufferAddress(env, buffer) : NULL;
  const jlong capacity = buffer != NULL ? (*env)->GetDirectBufferCapacity(env, buffer) : -1;
  if (p == NULL && capacity != 0) {
    throw_error(env, SG_INVALID_ARGUMENT, what);
    return NULL;
  }
  if (capacity < need) {
    throw_error(env, SG_INVALID_ARGUMENT, "the buffer is smaller than the tensor it holds");
    return NULL;
  }
  return p;
}

JNIEXPORT void SG_JNI(setInput)(JNIEnv* env, jclass cls, jlong session, jint index, jint dtype, jlongArray shape,
                                jobject data, jlong nbytes) {
  (void)cls;
  if (!check_handle(env, session, "the session is closed")) return;
  if (shape == NULL || index < 0 || nbytes < 0) {
    throw_error(env, SG_INVALID_ARGUMENT, "setInput: null shape, or a negative index or size");
    return;
  }
  void* p = direct_address(env, data, nbytes, "setInput: the tensor's buffer is not direct");
  if ((*env)->ExceptionCheck(env)) return;
  jsize rank = (*env)->GetArrayLength(env, shape);
  jlong dims[16];
  if (rank > 16) {
    throw_error(env, SG_INVALID_INPUT, "setInput: rank above 16");
    return;
  }
  (*env)->GetLongArrayRegion(env, shape, 0, rank, dims);
  int64_t dims64[16];
  for (jsize d = 0; d < rank; ++d) dims64[d] = (int64_t)dims[d];
  sg_status* st = new_status(env);
  if (st == NULL) return;
  static const uint8_t empty[1];
  const sg_code code = sg_session_set_input_at(SESSION(session), (size_t)index, (sg_dtype)dtype, dims64,
                                               (size_t)rank, p != NULL ? p : empty, (size_t)nbytes, st);
  failed(env, code, st);
  sg_status_release(st);
}

JNIEXPORT void SG_JNI(bindOutput)(JNIEnv* env, jclass cls, jlong session, jint index, jobject data,
                                  jlong capacity) {
  (void)cls;
  if (!check_handle(env, session, "the session is closed")) return;
  if (index < 0 || capacity < 0) {
    throw_error(env, SG_INVALID_ARGUMENT, "bindOutput: negative index or capacity");
    return;
  }
  void* p = NULL;
  if (data != NULL) {
    p = direct_address(env, data, capacity, "bindOutput: the tensor's buffer is not direct");
    if ((*env)->ExceptionCheck(env)) return;
  }
  sg_status* st = new_status(env);
  if (st == NULL) return;
  const sg_code code = sg_session_bind_output(SESSION(session), (size_t)index, p, (size_t)capacity, st);
  failed(env, code, st);
  sg_status_release(st);
}

JNIEXPORT void SG_JNI(run)(JNIEnv* env, jclass cls, jlong session) {
  (void)cls;
  if (!check_handle(env, session, "the session is closed")) return;
  sg_status* st = new_status(env);
  if (st == NULL) return;
  const sg_code code = sg_session_run(SESSION(session), st);
  failed(env, code, st);
  sg_status_release(st);
}

/* ---- variables (SPEC §12) ------------------------------------------------------------ */
/* save (load 0) or load (load 1) the session's variables at `path`. */
static void session_variables(JNIEnv* env, jlong session, jstring path, int load) {
  if (!check_handle(env, session, "the session is closed")) return;
  if (path == NULL) {
    throw_error(env, SG_INVALID_ARGUMENT, "the path is null");
    return;
  }
  const char* p = (*env)->GetStringUTFChars(env, path, NULL);
  if (p == NULL) return;
  sg_status* st = new_status(env);
  if (st != NULL) {
    const sg_code code = load ? sg_session_load_variables(SESSION(session), p, st)
                              : sg_session_save_variables(SESSION(session), p, st);
    failed(env, code, st);
  }
  (*env)->ReleaseStringUTFChars(env, path, p);
  sg_status_release(st);
}

JNIEXPORT void SG_JNI(saveVariables)(JNIEnv* env, jclass cls, jlong session, jstring path) {
  (void)cls;
  session_variables(env, session, path, 0);
}

JNIEXPORT void SG_JNI(loadVariables)(JNIEnv* env, jclass cls, jlong session, jstring path) {
  (void)cls;
  session_variables(env, session, path, 1);
}

JNIEXPORT void SG_JNI(copyVariables)(JNIEnv* env, jclass cls, jlong session, jlong from) {
  (void)cls;
  if (!check_handle(env, session, "the session is closed")) return;
  if (!check_handle(env, from, "the session to copy from is closed")) return;
  sg_status* st = new_status(env);
  if (st == NULL) return;
  failed(env, sg_session_copy_variables(SESSION(session), SESSION(from), st), st);
  sg_status_release(st);
}

JNIEXPORT void SG_JNI(cancel)(JNIEnv* env, jclass cls, jlong session) {
  (void)env, (void)cls;
  if (session != 0) sg_session_cancel(SESSION(session));
}

JNIEXPORT void SG_JNI(setRunTimeout)(JNIEnv* env, jclass cls, jlong session, jlong micros) {
  (void)cls;
  if (!check_handle(env, session, "the session is closed")) return;
  if (micros < 0) {
    throw_error(env, SG_INVALID_ARGUMENT, "a negative run timeout");
    return;
  }
  sg_status* st = new_status(env);
  if (st == NULL) return;
  failed(env, sg_session_set_run_timeout_us(SESSION(session), (uint64_t)micros, st), st);
  sg_status_release(st);
}

JNIEXPORT jint SG_JNI(numOutputs)(JNIEnv* env, jclass cls, jlong session) {
  (void)cls;
  if (!check_handle(env, session, "the session is closed")) return 0;
  return (jint)sg_session_num_outputs(SESSION(session));
}

/* Output `index` of the last run: its bytes, dtype and dims, or an error thrown. */
static int output_at(JNIEnv* env, jlong session, jint index, const void** data, sg_dtype* dtype,
                     const int64_t** shape, size_t* rank) {
  if (!check_handle(env, session, "the session is closed")) return 0;
  if (index < 0) {
    throw_error(env, SG_INVALID_ARGUMENT, "a negative output index");
    return 0;
  }
  sg_status* st = new_status(env);
  if (st == NULL) return 0;
  const sg_code code = sg_session_output(SESSION(session), (size_t)index, data, dtype, shape, rank, st);
  failed(env, code, st);
  sg_status_release(st);
  return code == SG_OK;
}

JNIEXPORT jint SG_JNI(outputDtype)(JNIEnv* env, jclass cls, jlong session, jint index) {
  (void)cls;
  sg_dtype dtype = 0;
  return output_at(env, session, index, NULL, &dtype, NULL, NULL) ? (jint)dtype : 0;
}

JNIEXPORT jlongArray SG_JNI(outputShape)(JNIEnv* env, jclass cls, jlong session, jint index) {
  (void)cls;
  const int64_t* shape = NULL;
  size_t rank = 0;
  if (!output_at(env, session, index, NULL, NULL, &shape, &rank)) return NULL;
  jlongArray out = (*env)->NewLongArray(env, (jsize)rank);
  for (size_t d = 0; out != NULL && d < rank; ++d) {
    const jlong v = (jlong)shape[d];
    (*env)->SetLongArrayRegion(env, out, (jsize)d, 1, &v);
  }
  return out;
}

JNIEXPORT jobject SG_JNI(outputView)(JNIEnv* env, jclass cls, jlong session, jint index) {
  (void)cls;
  const void* data = NULL;
  if (!output_at(env, session, index, &data, NULL, NULL, NULL)) return NULL;
  const size_t nbytes = sg_session_output_nbytes(SESSION(session), (size_t)index);
  static uint8_t empty[1];
  /* The Java side hands it out read-only. */
  return (*env)->NewDirectByteBuffer(env, nbytes > 0 ? (void*)(uintptr_t)data : empty, (jlong)nbytes);
}
