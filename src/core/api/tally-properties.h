/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

/**
 * TALLY_PROPERTY_COMPUTED:
 *
 * The offset of a #TallyPropertyEntry whose value is not a plain field:
 * the class's own get_property() reads it.
 */
#define TALLY_PROPERTY_COMPUTED (-1)

/**
 * TallyPropertyEntry:
 * @name: the property's name
 * @type: its value type: %G_TYPE_STRING, %G_TYPE_BOOLEAN, %G_TYPE_UINT,
 *   %G_TYPE_INT64, %G_TYPE_DOUBLE, %G_TYPE_ENUM or %G_TYPE_OBJECT
 * @offset: the offset of its field in the instance (G_STRUCT_OFFSET()),
 *   or %TALLY_PROPERTY_COMPUTED; a string field is a `char *`, a boolean
 *   a #gboolean, an enum an `int`-sized enum, an object a pointer
 * @default_string: (nullable): the default of a string property
 * @default_number: the default of a boolean, number or enum property
 * @flags: the #GParamFlags; %G_PARAM_STATIC_STRINGS is added
 * @get_type: (nullable): for %G_TYPE_ENUM and %G_TYPE_OBJECT, the
 *   get_type function of the enum or the class
 * @maximum: the largest value of a number property
 * @minimum: the smallest value of a number property
 *
 * One property of a class whose properties are installed and read from a
 * table (tally_properties_install(), tally_properties_get()). The entry
 * at index i is the property with id i + 1 (id 0 is reserved by GObject);
 * a number ranges from @minimum to @maximum, or over its type's whole range
 * (from 0 for %G_TYPE_UINT) when @maximum is not above @minimum (as when
 * both are left 0).
 */
typedef struct
{
  const char  *name;
  GType        type;
  gssize       offset;
  const char  *default_string;
  double       default_number;
  GParamFlags  flags;
  GType      (*get_type) (void);
  double       maximum;
  double       minimum;
} TallyPropertyEntry;

void      tally_properties_install (GObjectClass             *klass,
                                    const TallyPropertyEntry *entries,
                                    guint                     n_entries,
                                    GParamSpec              **pspecs);
gboolean  tally_properties_get     (GObject                  *object,
                                    const TallyPropertyEntry *entries,
                                    guint                     n_entries,
                                    guint                     prop_id,
                                    GValue                   *value);
gboolean  tally_properties_set_string  (GObject     *object,
                                        char       **field,
                                        const char  *value,
                                        GParamSpec  *pspec);
gboolean  tally_properties_take_string (GObject     *object,
                                        char       **field,
                                        char        *value,
                                        GParamSpec  *pspec);
gboolean  tally_properties_set_boolean (GObject     *object,
                                        gboolean    *field,
                                        gboolean     value,
                                        GParamSpec  *pspec);
gboolean  tally_properties_set_uint    (GObject     *object,
                                        guint       *field,
                                        guint        value,
                                        GParamSpec  *pspec);
gboolean  tally_properties_set_int64   (GObject     *object,
                                        gint64      *field,
                                        gint64       value,
                                        GParamSpec  *pspec);

G_END_DECLS
