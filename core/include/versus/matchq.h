/* versus — match queues for transport modules (header only, nothing of core's linked): an intrusive singly-linked FIFO whose
 * links carry a tag, so that receives posted before their message and
 * messages arrived before their receive are both matched by tag in arrival
 * order.  Header only: every call is a few loads and stores the compiler
 * inlines into the module's data path.
 *
 * An entry embeds a vs_matchq_link_t and is reached back from it with
 * VS_MATCHQ_ENTRY.  Put the link first in the entry's struct and the
 * conversion costs nothing.  The queue does not own its entries. */
#ifndef VERSUS_MATCHQ_H
#define VERSUS_MATCHQ_H

#include <stddef.h>
#include <stdint.h>

typedef struct vs_matchq_link {
    struct vs_matchq_link *next;
    uint64_t tag;
} vs_matchq_link_t;

/* Empty when head is NULL; tail is meaningful only while head is not. */
typedef struct vs_matchq {
    vs_matchq_link_t *head, *tail;
} vs_matchq_t;

static inline void *vs_matchq_entry_at(vs_matchq_link_t *l, size_t off)
{
    return l ? (void *)((char *)l - off) : NULL;
}

/* The entry of type `type` whose member `member` is link; NULL for NULL. */
#define VS_MATCHQ_ENTRY(link, type, member) \
    ((type *)vs_matchq_entry_at((link), offsetof(type, member)))

static inline void vs_matchq_push(vs_matchq_t *q, vs_matchq_link_t *l)
{
    l->next = NULL;
    if (q->head)
        q->tail->next = l;
    else
        q->head = l;
    q->tail = l;
}

/* Removes and returns the oldest entry (NULL when empty). */
static inline vs_matchq_link_t *vs_matchq_pop(vs_matchq_t *q)
{
    vs_matchq_link_t *l = q->head;
    if (l)
        q->head = l->next;
    return l;
}

/* Removes l, which follows prev (NULL: l is the head). */
static inline void vs_matchq_unlink(vs_matchq_t *q, vs_matchq_link_t *prev, vs_matchq_link_t *l)
{
    if (prev)
        prev->next = l->next;
    else
        q->head = l->next;
    if (q->tail == l)
        q->tail = prev;
    l->next = NULL;
}

/* Removes and returns the oldest entry with this tag (NULL when none). */
static inline vs_matchq_link_t *vs_matchq_take(vs_matchq_t *q, uint64_t tag)
{
    vs_matchq_link_t *prev = NULL;
    for (vs_matchq_link_t *l = q->head; l; prev = l, l = l->next) {
        if (l->tag == tag) {
            vs_matchq_unlink(q, prev, l);
            return l;
        }
    }
    return NULL;
}

/* Removes l, which must be in q. */
static inline void vs_matchq_remove(vs_matchq_t *q, vs_matchq_link_t *l)
{
    vs_matchq_link_t *prev = NULL;
    for (vs_matchq_link_t *c = q->head; c != l; c = c->next)
        prev = c;
    vs_matchq_unlink(q, prev, l);
}

#endif
