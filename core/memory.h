/* Message buffers: where they live and how core reaches their bytes.
 *
 * By default core allocates page-aligned host memory, touches every page
 * before anything is timed, and fills and compares buffers with plain
 * memory operations.  A module that declares the memory operations of the
 * ops table (mem_alloc, mem_free, mem_fill, mem_compare) owns its buffers
 * instead, and core reaches their bytes only through those: the patterns'
 * timed loops never read or write a buffer, so they are the same for both. */
#ifndef VS_MEMORY_H
#define VS_MEMORY_H

#include <stddef.h>

#include <versus/transport.h>

/* Core may read and write the module's buffers through their addresses: it
 * allocates them, or the module allocates host memory (no mem_fill). */
static inline int vs_mem_host(const vs_transport_ops_t *ops) { return ops->mem_fill == NULL; }

/* A buffer of at least len bytes (never 0), registered with the module when
 * it registers memory.  0 or a negative errno. */
int vs_mem_alloc(const vs_transport_ops_t *ops, vs_transport_t *t, vs_mem_t *mem, size_t len);
void vs_mem_release(const vs_transport_ops_t *ops, vs_transport_t *t, vs_mem_t *mem);

/* len bytes of src (host memory) into mem from offset 0. */
int vs_mem_fill(const vs_transport_ops_t *ops, vs_transport_t *t, vs_mem_t *mem, const void *src, size_t len);
/* mem's first len bytes against want (host memory); diff->offset -1: equal. */
int vs_mem_compare(const vs_transport_ops_t *ops, vs_transport_t *t, const vs_mem_t *mem, const void *want,
                   size_t len, vs_mem_diff_t *diff);

#endif
