#include "memory.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int host_alloc(vs_mem_t *mem, size_t len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t alloc = (len ? len : 1) + page - 1;
    if (alloc < len)
        return -ENOMEM;
    alloc = alloc / page * page;
    if (posix_memalign(&mem->addr, page, alloc))
        return -ENOMEM;
    memset(mem->addr, 0xa5, alloc); /* touch every page before timing */
    mem->len = alloc;
    return 0;
}

/* The storage alone: the module's, or core's host memory. */
static void drop(const vs_transport_ops_t *ops, vs_transport_t *t, vs_mem_t *mem)
{
    if (ops->mem_free)
        ops->mem_free(t, mem);
    else
        free(mem->addr);
    memset(mem, 0, sizeof *mem);
}

int vs_mem_alloc(const vs_transport_ops_t *ops, vs_transport_t *t, vs_mem_t *mem, size_t len)
{
    memset(mem, 0, sizeof *mem);
    int rc = ops->mem_alloc ? ops->mem_alloc(t, len ? len : 1, mem) : host_alloc(mem, len);
    if (rc)
        return rc < 0 ? rc : -rc;
    if (mem->len < (len ? len : 1)) {
        drop(ops, t, mem);
        return -EPROTO; /* the module gave less than asked */
    }
    if (ops->mem_reg && (rc = ops->mem_reg(t, mem)))
        drop(ops, t, mem);
    return rc;
}

void vs_mem_release(const vs_transport_ops_t *ops, vs_transport_t *t, vs_mem_t *mem)
{
    if (!mem->addr && !mem->len)
        return;
    if (ops->mem_dereg)
        ops->mem_dereg(t, mem);
    drop(ops, t, mem);
}

int vs_mem_fill(const vs_transport_ops_t *ops, vs_transport_t *t, vs_mem_t *mem, const void *src, size_t len)
{
    if (len > mem->len)
        return -EMSGSIZE;
    if (ops->mem_fill)
        return ops->mem_fill(t, mem, 0, src, len);
    memcpy(mem->addr, src, len);
    return 0;
}

int vs_mem_compare(const vs_transport_ops_t *ops, vs_transport_t *t, const vs_mem_t *mem, const void *want,
                   size_t len, vs_mem_diff_t *diff)
{
    if (len > mem->len)
        return -EMSGSIZE;
    if (ops->mem_compare)
        return ops->mem_compare(t, mem, 0, want, len, diff);
    vs_mem_diff_bytes(mem->addr, want, len, diff);
    return 0;
}
