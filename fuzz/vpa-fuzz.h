/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Shared by the fuzz targets: invariants that abort (libFuzzer reports an
 * abort as a crash and keeps the input), and GLib set up so that a
 * critical or warning from a g_return_if_fail is a crash too.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* Not g_assert: it must hold with G_DISABLE_ASSERT too, and say which
 * invariant broke in the crash report. */
#define VPA_FUZZ_CHECK(cond)                                                  \
  G_STMT_START                                                                \
  {                                                                           \
    if (G_UNLIKELY (!(cond)))                                                 \
      {                                                                       \
        fprintf (stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, \
                 #cond);                                                      \
        abort ();                                                             \
      }                                                                       \
  }                                                                           \
  G_STMT_END

/* The contract of every GError-returning function: a result iff no error,
 * and an error always carries a message. */
#define VPA_FUZZ_CHECK_RESULT(ok, error)                                        \
  G_STMT_START                                                                  \
  {                                                                             \
    VPA_FUZZ_CHECK ((ok) == ((error) == NULL));                                 \
    if ((error) != NULL)                                                        \
      VPA_FUZZ_CHECK ((error)->message != NULL && (error)->message[0] != '\0'); \
  }                                                                             \
  G_STMT_END

/* Criticals and warnings abort; debug output is dropped (the parsers log
 * nothing on success, and libFuzzer runs millions of inputs). */
void vpa_fuzz_init (void);

/* A NUL-terminated copy of the input (some parsers take C strings). */
char *vpa_fuzz_strndup (const uint8_t *data, size_t size);

#include "vpa-types.h"

/* A fixed small host for the targets that need one: two NUMA nodes on two
 * sockets; per node an SR-IOV PF (8086:1572, netdev ensNf0) with four VFs
 * (8086:154c) and a QuickAssist (8086:0443). Sealed. */
VpaHost *vpa_fuzz_small_host (void);
