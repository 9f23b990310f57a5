/* Shared-memory segments left by dead runs.  Every segment versus creates, in
 * core (the drift probe's) or in a module, is named
 * /versus-<kind>-<creator's pid>-<token>, kind a lower-case word (the module's
 * name); a run that dies before it unlinks leaves the name behind.  The sweep
 * removes those whose creator no longer exists. */
#ifndef VS_SWEEP_H
#define VS_SWEEP_H

#include <stdio.h>

/* Unlink this user's versus segments whose creator has exited; names each on
 * report when report is not NULL.  Returns how many were removed, or -errno
 * when the segment directory cannot be read. */
int vs_shm_sweep(FILE *report);

#endif
