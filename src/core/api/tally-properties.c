/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-properties"

#include "config.h"

#include "tally-properties.h"

/*
 * Properties from one table: a class lists its properties once (name, type,
 * field, default, flags) and installs and reads them through these two
 * functions instead of a g_param_spec_*() call and a get_property() case
 * per property. Computed properties stay with the class.
 */

static GParamSpec *
pspec_new (const TallyPropertyEntry *entry)
{
  GParamFlags flags = entry->flags | G_PARAM_STATIC_STRINGS;
  gboolean ranged = entry->maximum > entry->minimum;

  switch (G_TYPE_FUNDAMENTAL (entry->type))
    {
    case G_TYPE_STRING:
      return g_param_spec_string (entry->name, NULL, NULL, entry->default_string, flags);

    case G_TYPE_BOOLEAN:
      return g_param_spec_boolean (entry->name, NULL, NULL, entry->default_number != 0, flags);

    case G_TYPE_UINT:
      return g_param_spec_uint (entry->name, NULL, NULL,
                                ranged ? (guint) entry->minimum : 0,
                                ranged ? (guint) entry->maximum : G_MAXUINT,
                                (guint) entry->default_number, flags);

    case G_TYPE_INT64:
      /* G_MAXINT64 is not a double: 2^63 stands for it. */
      return g_param_spec_int64 (entry->name, NULL, NULL,
                                 ranged ? (gint64) entry->minimum : G_MININT64,
                                 ranged && entry->maximum < (double) G_MAXINT64
                                   ? (gint64) entry->maximum : G_MAXINT64,
                                 (gint64) entry->default_number, flags);

    case G_TYPE_DOUBLE:
      return g_param_spec_double (entry->name, NULL, NULL,
                                  ranged ? entry->minimum : -G_MAXDOUBLE,
                                  ranged ? entry->maximum : G_MAXDOUBLE,
                                  entry->default_number, flags);

    case G_TYPE_ENUM:
      return g_param_spec_enum (entry->name, NULL, NULL, entry->get_type (),
                                (int) entry->default_number, flags);

    case G_TYPE_OBJECT:
      return g_param_spec_object (entry->name, NULL, NULL, entry->get_type (), flags);

    default:
      g_critical ("Property %s: type %s cannot come from a table",
                  entry->name, g_type_name (entry->type));
      return NULL;
    }
}

/**
 * tally_properties_install:
 * @klass: the class
 * @entries: (array length=n_entries): its properties, in id order from 1
 * @n_entries: how many
 * @pspecs: (array) (out caller-allocates): the class's pspec array of
 *   @n_entries + 1 elements; element 0 stays %NULL, element i is the
 *   property of @entries[i - 1] (for g_object_notify_by_pspec())
 *
 * Creates the #GParamSpec of every entry and installs them all on @klass.
 * Call it from class_init.
 */
void
tally_properties_install (GObjectClass             *klass,
                          const TallyPropertyEntry *entries,
                          guint                     n_entries,
                          GParamSpec              **pspecs)
{
  g_return_if_fail (G_IS_OBJECT_CLASS (klass));
  g_return_if_fail (entries != NULL && pspecs != NULL);

  pspecs[0] = NULL;
  for (guint i = 0; i < n_entries; i++)
    pspecs[i + 1] = pspec_new (&entries[i]);

  g_object_class_install_properties (klass, n_entries + 1, pspecs);
}

/**
 * tally_properties_get:
 * @object: an instance of the class
 * @entries: (array length=n_entries): the class's table
 * @n_entries: how many
 * @prop_id: the id given to get_property()
 * @value: the value to set
 *
 * The body of a get_property() for the table's plain fields: sets @value
 * from the field of @prop_id's entry.
 *
 * Returns: %TRUE when @value was set; %FALSE for a computed property or
 *   an id outside the table, which the class handles itself
 */
gboolean
tally_properties_get (GObject                  *object,
                      const TallyPropertyEntry *entries,
                      guint                     n_entries,
                      guint                     prop_id,
                      GValue                   *value)
{
  const TallyPropertyEntry *entry;

  g_return_val_if_fail (G_IS_OBJECT (object), FALSE);

  if (prop_id == 0 || prop_id > n_entries || entries[prop_id - 1].offset < 0)
    return FALSE;

  entry = &entries[prop_id - 1];
  switch (G_TYPE_FUNDAMENTAL (entry->type))
    {
    case G_TYPE_STRING:
      g_value_set_string (value, G_STRUCT_MEMBER (char *, object, entry->offset));
      return TRUE;

    case G_TYPE_BOOLEAN:
      g_value_set_boolean (value, G_STRUCT_MEMBER (gboolean, object, entry->offset));
      return TRUE;

    case G_TYPE_UINT:
      g_value_set_uint (value, G_STRUCT_MEMBER (guint, object, entry->offset));
      return TRUE;

    case G_TYPE_INT64:
      g_value_set_int64 (value, G_STRUCT_MEMBER (gint64, object, entry->offset));
      return TRUE;

    case G_TYPE_DOUBLE:
      g_value_set_double (value, G_STRUCT_MEMBER (double, object, entry->offset));
      return TRUE;

    case G_TYPE_ENUM:
      g_value_set_enum (value, G_STRUCT_MEMBER (int, object, entry->offset));
      return TRUE;

    case G_TYPE_OBJECT:
      g_value_set_object (value, G_STRUCT_MEMBER (gpointer, object, entry->offset));
      return TRUE;

    default:
      return FALSE;
    }
}
