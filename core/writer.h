/* JSON Lines result file: one record per line, flushed to disk per record. */
#ifndef VS_WRITER_H
#define VS_WRITER_H

#include <stddef.h>

#include "json.h"

typedef struct vs_writer vs_writer_t;

/* What the end record says; its format is record.c's (vs_record_end). */
#define VS_WRITER_END_EXTRA 8
typedef struct vs_writer_end {
    const char *status, *message;
    long sizes_completed;  /* "size" records written */
    int n_extra;
    const char *extra_key[VS_WRITER_END_EXTRA];
    double extra_val[VS_WRITER_END_EXTRA];
} vs_writer_end_t;
typedef void (*vs_writer_end_fn)(vs_json_t *j, const vs_writer_end_t *end);

/* 1 (with the reason in err) when path is a regular file that already holds bytes. */
int vs_writer_holds_results(const char *path, char *err, size_t errlen);

/* Open path for writing; format_end builds the end record.  A regular file that
 * already holds bytes is refused unless overwrite is set (then it is truncated);
 * an empty file or a non-regular one (/dev/null) is written as is.  Returns
 * NULL with the reason in err. */
vs_writer_t *vs_writer_open(const char *path, int overwrite, vs_writer_end_fn format_end, char *err,
                            size_t errlen);

/* Append the record built in j (one JSON object) and flush it to disk.
 * Thread-safe.  Counts "size" records when is_size is set.  -ECANCELED once the end
 * record is written (by the watchdog, which then ends the process). */
int vs_writer_record(vs_writer_t *w, const vs_json_t *j, int is_size);

/* Write the end record once (later calls do nothing).  Thread-safe; safe to
 * call from the watchdog while the main thread is stuck. */
int vs_writer_end(vs_writer_t *w, const char *status, const char *message);

/* A number to add to the end record when it is written (up to VS_WRITER_END_EXTRA). */
void vs_writer_end_num(vs_writer_t *w, const char *key, double value);

/* Close and delete the file: nothing was measured (the run failed before
 * its run record could be written). */
void vs_writer_abandon(vs_writer_t *w);

/* Close; writes an end record with status "error" if none was written. */
void vs_writer_close(vs_writer_t *w);

const char *vs_writer_path(const vs_writer_t *w);

/* ISO 8601 UTC timestamp of now. */
void vs_iso8601_now(char *buf, size_t len);

#endif
