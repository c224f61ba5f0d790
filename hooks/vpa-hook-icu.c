/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ICU's character converters, as far as libxml2 uses them, for a hook
 * module that links libxml2 statically: converters that never open.
 *
 * libxml2 asks ICU only for an encoding that neither it nor glibc's iconv
 * knows; libvirt writes UTF-8. Linking ICU instead would add its 30 MB
 * data library and libstdc++ to every start of a domain with PCI devices.
 * A document in such an encoding fails to parse, and the hook fails
 * closed on it as on any unreadable request. The names come from ICU's
 * header, which renames them to the installed ICU's versioned symbols.
 */
#include <unicode/ucnv.h>

UConverter *
ucnv_open (const char *name, UErrorCode *err)
{
  *err = U_FILE_ACCESS_ERROR;
  return NULL;
}

void
ucnv_close (UConverter *conv)
{
}

void
ucnv_setToUCallBack (UConverter *conv, UConverterToUCallback action, const void *context,
                     UConverterToUCallback *old_action, const void **old_context,
                     UErrorCode *err)
{
  *err = U_UNSUPPORTED_ERROR;
}

void
ucnv_setFromUCallBack (UConverter *conv, UConverterFromUCallback action, const void *context,
                       UConverterFromUCallback *old_action, const void **old_context,
                       UErrorCode *err)
{
  *err = U_UNSUPPORTED_ERROR;
}

void
ucnv_convertEx (UConverter *target_cnv, UConverter *source_cnv, char **target,
                const char *target_limit, const char **source, const char *source_limit,
                UChar *pivot_start, UChar **pivot_source, UChar **pivot_target,
                const UChar *pivot_limit, UBool reset, UBool flush, UErrorCode *err)
{
  *err = U_UNSUPPORTED_ERROR;
}

void
UCNV_TO_U_CALLBACK_STOP (const void *context, UConverterToUnicodeArgs *args,
                         const char *code_units, int32_t length,
                         UConverterCallbackReason reason, UErrorCode *err)
{
}

void
UCNV_FROM_U_CALLBACK_STOP (const void *context, UConverterFromUnicodeArgs *args,
                           const UChar *code_units, int32_t length, UChar32 code_point,
                           UConverterCallbackReason reason, UErrorCode *err)
{
}
