/* admission.c - admitting query pipelines on a device by memory footprint (admission.h). */
#include "data/admission.h"

#include "core/runtime.h"

int coproc__admit(coproc__device *dev, uint64_t bytes, double until, int wait)
{
    coproc__residency *r = dev->residency;
    if (bytes > dev->budget_bytes)
        return -1;
    pthread_mutex_lock(&r->lock);
    int waited = 0;
    while (r->admitted + bytes > dev->budget_bytes && wait) {
        waited = 1;
        pthread_cond_wait(&r->released, &r->lock);
    }
    int ok = r->admitted + bytes <= dev->budget_bytes;
    if (ok) {
        r->admitted += bytes;
        r->admitted_peak = r->admitted > r->admitted_peak ? r->admitted : r->admitted_peak;
        r->admitted_n++;
        r->busy_until = until > r->busy_until ? until : r->busy_until;
        r->admission_waits += waited;
    }
    pthread_mutex_unlock(&r->lock);
    return ok;
}

void coproc__admit_release(coproc__device *dev, uint64_t bytes)
{
    coproc__residency *r = dev->residency;
    pthread_mutex_lock(&r->lock);
    r->admitted -= bytes < r->admitted ? bytes : r->admitted;
    if (r->admitted_n > 0 && --r->admitted_n == 0)
        r->busy_until = 0;
    pthread_cond_broadcast(&r->released);
    pthread_mutex_unlock(&r->lock);
}

double coproc__admit_wait_s(coproc__device *dev, double now)
{
    coproc__residency *r = dev->residency;
    pthread_mutex_lock(&r->lock);
    double w = r->admitted_n > 0 && r->busy_until > now ? r->busy_until - now : 0;
    pthread_mutex_unlock(&r->lock);
    return w;
}
