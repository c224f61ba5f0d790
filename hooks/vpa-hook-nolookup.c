/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * User and host lookups for a hook module that links glibc statically:
 * none. Linked with --wrap for each function (hooks/meson.build).
 *
 * Statically linked, glibc would load NSS modules (and with them a
 * second, shared glibc that must be the exact version linked here) to
 * answer these. GLib's user-database helpers and libxml2's HTTP/FTP
 * client reference them, but the hook never asks for a user, a home
 * directory or a host: it reads libvirt's XML with XML_PARSE_NONET and
 * its own configuration by path. So each one answers "not found", and
 * the module loads no code at run time.
 */
#include <errno.h>
#include <netdb.h>
#include <pwd.h>
#include <stddef.h>
#include <sys/types.h>

struct passwd *__wrap_getpwuid (uid_t uid);
int __wrap_getpwuid_r (uid_t uid, struct passwd *pwd, char *buf, size_t len,
                       struct passwd **result);
int __wrap_getpwnam_r (const char *name, struct passwd *pwd, char *buf, size_t len,
                       struct passwd **result);
int __wrap_getaddrinfo (const char *node, const char *service, const struct addrinfo *hints,
                        struct addrinfo **res);
void __wrap_freeaddrinfo (struct addrinfo *res);
struct hostent *__wrap_gethostbyname (const char *name);

struct passwd *
__wrap_getpwuid (uid_t uid)
{
  errno = 0;
  return NULL;
}

int
__wrap_getpwuid_r (uid_t uid, struct passwd *pwd, char *buf, size_t len,
                   struct passwd **result)
{
  *result = NULL;
  return 0;
}

int
__wrap_getpwnam_r (const char *name, struct passwd *pwd, char *buf, size_t len,
                   struct passwd **result)
{
  *result = NULL;
  return 0;
}

int
__wrap_getaddrinfo (const char *node, const char *service, const struct addrinfo *hints,
                    struct addrinfo **res)
{
  return EAI_NONAME;
}

void
__wrap_freeaddrinfo (struct addrinfo *res)
{
}

struct hostent *
__wrap_gethostbyname (const char *name)
{
  h_errno = HOST_NOT_FOUND;
  return NULL;
}
