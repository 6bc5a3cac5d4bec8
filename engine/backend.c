/* engine/backend.c: the one file that names both backends: it reads a --device
 * name ("auto", "cpu", "cuda", "cuda:N"; none given: $CACHET_DEVICE, else "auto"),
 * opens the backend it picks, stands in for the CUDA backend in builds without
 * it, and frees either. Does not compute anything (cpu/backend_cpu.c,
 * cuda/backend_cuda.cu). */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "engine.h"

int eng_device_parse(eng_device *out, const char *name, util_err *err) {
    out->kind = ENG_DEVICE_AUTO;
    out->index = 0;
    if (strcmp(name, "auto") == 0) return UTIL_OK;
    if (strcmp(name, "cpu") == 0) {
        out->kind = ENG_DEVICE_CPU;
        return UTIL_OK;
    }
    if (strncmp(name, "cuda", 4) != 0 || (name[4] != '\0' && name[4] != ':'))
        return util_err_set(err, UTIL_EINVAL, "--device '%s': expected auto, cpu, cuda or cuda:N", name);
    out->kind = ENG_DEVICE_CUDA;
    if (name[4] == '\0') return UTIL_OK;
    /* digits only (no sign, space or '0x'), at most 64 */
    const char *d = name + 5;
    size_t n = strspn(d, "0123456789");
    long idx = n > 0 && n <= 2 && d[n] == '\0' ? strtol(d, NULL, 10) : -1;
    if (idx < 0 || idx > 64)
        return util_err_set(err, UTIL_EINVAL, "--device '%s': expected cuda or cuda:N", name);
    out->index = (int)idx;
    return UTIL_OK;
}

int eng_device_requested(eng_device *out, const char *device, util_err *err) {
    const char *env = getenv("CACHET_DEVICE");
    if (!device) device = env && *env ? env : "auto"; /* unset, not an explicit "auto" */
    return eng_device_parse(out, device, err);
}

int eng_backend_open(eng_backend **out, const eng_backend_params *p, util_err *err) {
    *out = NULL;
    eng_device dev;
    int rc = eng_device_requested(&dev, p->device, err);
    if (rc) return rc;
    if (dev.kind == ENG_DEVICE_AUTO)
        dev.kind = eng_backend_cuda_count() > 0 ? ENG_DEVICE_CUDA : ENG_DEVICE_CPU;
    if (dev.kind == ENG_DEVICE_CPU) {
        rc = eng_backend_cpu_new(out, p->n_threads, err);
        if (rc == UTIL_OK && p->exact) eng_backend_cpu_set_exact(*out);
        return rc;
    }
    if (p->exact)
        return util_err_set(err, UTIL_EINVAL,
                            "--exact is a CPU mode; the CUDA backend computes in f32 already");
    return eng_backend_cuda_new(out, dev.index, err);
}

#ifndef CACHET_CUDA
int eng_backend_cuda_new(eng_backend **out, int device, util_err *err) {
    *out = NULL;
    return util_err_set(err, UTIL_EUNSUPPORTED,
                        "this cachet was built without CUDA (build it with `make cuda`)");
}

int eng_backend_cuda_count(void) { return 0; }
#endif

void eng_backend_free(eng_backend *be) {
    if (be) be->ops->destroy(be);
}
