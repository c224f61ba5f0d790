/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * check --live: where a running domain's guest memory and vCPU threads
 * really are, per guest cell, against the host nodes the cell is bound
 * to (docs/live.md). libvpa-live: linked by the CLI's
 * libvirt module and the tests only, never by the hook.
 */
#pragma once

#include <glib.h>

#include "vpa-domain.h"

G_BEGIN_DECLS

/* Pages queried per cell, threads read per process, nodes told apart. */
#define VPA_LIVE_SAMPLE_MAX 1024
#define VPA_LIVE_THREADS_MAX 4096
#define VPA_LIVE_NODES_MAX 64
/* /proc/PID/maps lines read. */
#define VPA_LIVE_MAPS_MAX 65536

/* move_pages(2) in query mode: status[i] is the node of pages[i], or a
 * negative errno (-ENOENT: not resident). Returns 0, or -1 with errno. */
typedef int (*VpaLivePageQuery) (int pid, gulong count, void **pages, int *status,
                                 gpointer user_data);

/* A writable private or shared mapping that may hold guest RAM:
 * anonymous, memfd or hugetlbfs. */
typedef struct {
  guint64 start;
  guint64 end;
} VpaLiveMapping;

typedef struct {
  guint cell;
  GArray *bound; /* gint host nodes the cell is bound to; empty: unbound */
  guint64 start; /* its mapping */
  guint64 size;
  guint sampled;  /* pages queried */
  guint resident; /* of them with a node */
  guint on_node[VPA_LIVE_NODES_MAX];
  GArray *vcpus; /* VpaLiveVcpu */
  gboolean off;  /* more than half its resident pages off its bound nodes */
} VpaLiveCell;

typedef struct {
  gint vcpu; /* -1: the one thread of single-threaded TCG, all vCPUs */
  gint cpu;  /* host CPU it last ran on */
  gint node; /* that CPU's node, -1 unknown */
} VpaLiveVcpu;

typedef struct {
  char *domain;
  int pid;
  GPtrArray *cells;  /* VpaLiveCell* */
  GArray *dev_nodes; /* gint host nodes of its placed devices, sorted, unique */
  gboolean ok;
} VpaLiveReport;

void vpa_live_report_free (VpaLiveReport *report);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (VpaLiveReport, vpa_live_report_free)

/* Where the process and its host are looked at. */
typedef struct {
  const char *proc_root;  /* "/proc" */
  const char *sysfs_root; /* "/sys" */
  gsize page_size;        /* 0: the host's */
  VpaLivePageQuery query; /* NULL: numa_move_pages (libnuma) */
  gpointer query_data;
} VpaLiveEnv;

/* /proc/PID/maps text (doc->what names it in messages) into its
 * guest-RAM candidates (VpaLiveMapping). */
GArray *vpa_live_maps_parse (const VpaDoc *doc, GError **error);

/* Field 39 of /proc/PID/task/TID/stat: the CPU the thread last ran on. */
gboolean vpa_live_stat_cpu (const char *buf, gint *out_cpu);

/* The report for dom running as pid. VPA_ERROR_ENVIRONMENT when a cell's
 * memory cannot be found or queried (fail closed). */
VpaLiveReport *vpa_live_check (const VpaDomain *dom, int pid, const VpaLiveEnv *env,
                               GError **error);

/* One line on the first cell off its bound nodes ("cell 0: 97% of 1024
 * resident sampled pages off bound node 1"), or NULL when none is. */
char *vpa_live_failure (const VpaLiveReport *report);

/* The report as text lines, JSON or OpenMetrics. */
char *vpa_live_format (const VpaLiveReport *report, const char *format);

G_END_DECLS
