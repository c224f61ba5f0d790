/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "vpa-cli-request.h"

#include <string.h>

#include "vpa-types.h"

#define REQUEST_USAGE                                                                 \
  "request: expected DOMAIN show | add-port ALIAS | add-alias NAME:COUNT | set-numa " \
  "KEY=VALUE... | remove NAME | place"

static void
add_attr (GPtrArray *attrs, const char *key, const char *value)
{
  if (value == NULL)
    return;
  g_ptr_array_add (attrs, (gpointer) key);
  g_ptr_array_add (attrs, (gpointer) value);
}

static gboolean
port_attrs (const VpaCliRequestPort *port, GPtrArray *attrs, GError **error)
{
  VpaPolicy policy;

  if (port->policy != NULL && !vpa_policy_from_string (port->policy, &policy))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "request: --policy '%s': unknown NUMA affinity policy (expected required, legacy, preferred or socket)",
                   port->policy);
      return FALSE;
    }
  add_attr (attrs, "physnet", port->physnet);
  add_attr (attrs, "vnic-type", port->vnic_type != NULL ? port->vnic_type : "direct");
  add_attr (attrs, "trusted", port->trusted ? "true" : NULL);
  add_attr (attrs, "pf-group", port->pf_group);
  add_attr (attrs, "policy", port->policy);
  add_attr (attrs, "locality-group", port->locality_group);
  return TRUE;
}

/* KEY=VALUE arguments of set-numa, split in place. */
static gboolean
numa_attrs (char **args, GPtrArray *attrs, GError **error)
{
  if (args[0] == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "request: set-numa: expected KEY=VALUE... (the attributes of <vpa:numa>, docs/domain-xml.md)");
      return FALSE;
    }
  for (guint i = 0; args[i] != NULL; i++)
    {
      char *eq = strchr (args[i], '=');

      if (eq == NULL || eq == args[i])
        {
          g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                       "request: set-numa '%.64s': expected KEY=VALUE", args[i]);
          return FALSE;
        }
      *eq = '\0';
      add_attr (attrs, args[i], eq + 1);
    }
  return TRUE;
}

static gboolean
alias_spec_valid (const char *spec)
{
  const char *colon = strchr (spec, ':');
  guint64 n;

  return colon != NULL && colon != spec &&
         g_ascii_string_to_unsigned (colon + 1, 10, 1, 1024, &n, NULL);
}

static gboolean
parse_op (char **args, VpaRequestEdit *edit, GError **error)
{
  static const struct {
    const char *name;
    VpaRequestEditOp op;
    guint nargs; /* G_MAXUINT: one or more */
  } ops[] = {
    { "add-port", VPA_REQUEST_EDIT_ADD_PORT, 1 },
    { "add-alias", VPA_REQUEST_EDIT_ADD_ALIAS, 1 },
    { "set-numa", VPA_REQUEST_EDIT_SET_NUMA, G_MAXUINT },
    { "remove", VPA_REQUEST_EDIT_REMOVE, 1 },
    { "place", VPA_REQUEST_EDIT_PLACE, 0 },
  };
  guint n = g_strv_length (args + 2);

  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    {
      if (strcmp (args[1], ops[i].name) == 0 &&
          (ops[i].nargs == G_MAXUINT ? n >= 1 : n == ops[i].nargs))
        {
          edit->op = ops[i].op;
          edit->name = ops[i].nargs == 1 ? args[2] : NULL;
          return TRUE;
        }
    }
  g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, REQUEST_USAGE " ('%.64s' with %u argument%s)",
               args[1], n, n == 1 ? "" : "s");
  return FALSE;
}

gboolean
vpa_cli_request_parse (char **args, const VpaCliRequestPort *port, gboolean *show,
                       VpaRequestEdit *edit, GPtrArray **attrs_out, GError **error)
{
  g_autoptr (GPtrArray) attrs = g_ptr_array_new ();

  *show = FALSE;
  *edit = (VpaRequestEdit){ 0 };
  if (args == NULL || args[0] == NULL || args[1] == NULL)
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID, REQUEST_USAGE);
      return FALSE;
    }
  if (strcmp (args[1], "show") == 0 && args[2] == NULL)
    {
      *show = TRUE;
      return TRUE;
    }
  if (!parse_op (args, edit, error))
    return FALSE;
  if (edit->op == VPA_REQUEST_EDIT_ADD_PORT && !port_attrs (port, attrs, error))
    return FALSE;
  if (edit->op == VPA_REQUEST_EDIT_SET_NUMA && !numa_attrs (args + 2, attrs, error))
    return FALSE;
  if (edit->op == VPA_REQUEST_EDIT_ADD_ALIAS && !alias_spec_valid (edit->name))
    {
      g_set_error (error, VPA_ERROR, VPA_ERROR_INVALID,
                   "request: add-alias '%.64s': expected NAME:COUNT (COUNT 1 to 1024)",
                   edit->name);
      return FALSE;
    }
  edit->mac = edit->op == VPA_REQUEST_EDIT_ADD_PORT ? port->mac : NULL;
  g_ptr_array_add (attrs, NULL);
  edit->attrs = (const char *const *) attrs->pdata;
  *attrs_out = g_steal_pointer (&attrs);
  return TRUE;
}

char *
vpa_cli_request_summary (const char *domain, const VpaRequestEdit *edit,
                         const VpaRequestEditResult *res)
{
  g_autofree char *quoted = g_shell_quote (domain);

  if (edit->op == VPA_REQUEST_EDIT_REMOVE && !res->added_device)
    return g_strdup_printf ("domain '%s': requests written; its devices stay as they are", domain);
  /* libvirt defines the interface only with its VF: until placed, the
   * port names no device and the hook refuses the domain. */
  if (res->added_device)
    {
      return g_strdup_printf ("domain '%s': requests written; its new interface is defined when it is placed, and until then the hook refuses its start: virt-pci-affinity request %s place",
                              domain, quoted);
    }
  return g_strdup_printf ("domain '%s': requests written; place it again: virt-pci-affinity request %s place",
                          domain, quoted);
}
