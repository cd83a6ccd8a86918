/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-properties"

#include "config.h"

#include <string.h>

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

/* The setters of a notifying property's field: each stores the value and
 * notifies only when it changed, so that a binding or a handler of
 * `notify` runs once per real change. */

/* The one body of the number and boolean setters: @size bytes at @value
 * into @field, and a notification, when they differ. */
static gboolean
set_scalar (GObject       *object,
            gpointer       field,
            gconstpointer  value,
            gsize          size,
            GParamSpec    *pspec)
{
  g_return_val_if_fail (G_IS_OBJECT (object), FALSE);
  g_return_val_if_fail (field != NULL, FALSE);

  if (memcmp (field, value, size) == 0)
    return FALSE;

  memcpy (field, value, size);
  g_object_notify_by_pspec (object, pspec);
  return TRUE;
}

/**
 * tally_properties_set_string:
 * @object: the instance
 * @field: (inout): the property's `char *` field
 * @value: (nullable): the new value, copied
 * @pspec: the property, for g_object_notify_by_pspec()
 *
 * Sets a string property's field to a copy of @value and notifies @pspec,
 * unless the field already holds an equal string (or both are %NULL).
 *
 * Returns: %TRUE when the value changed
 */
gboolean
tally_properties_set_string (GObject     *object,
                             char       **field,
                             const char  *value,
                             GParamSpec  *pspec)
{
  return tally_properties_take_string (object, field, g_strdup (value), pspec);
}

/**
 * tally_properties_take_string:
 * @object: the instance
 * @field: (inout): the property's `char *` field
 * @value: (nullable) (transfer full): the new value
 * @pspec: the property, for g_object_notify_by_pspec()
 *
 * Like tally_properties_set_string() for a value the caller made (a
 * canonical path, say): @field takes @value, or @value is freed when it
 * equals what @field holds.
 *
 * Returns: %TRUE when the value changed
 */
gboolean
tally_properties_take_string (GObject     *object,
                              char       **field,
                              char        *value,
                              GParamSpec  *pspec)
{
  g_return_val_if_fail (G_IS_OBJECT (object), FALSE);
  g_return_val_if_fail (field != NULL, FALSE);

  if (g_strcmp0 (*field, value) == 0)
    {
      g_free (value);
      return FALSE;
    }

  g_free (*field);
  *field = value;
  g_object_notify_by_pspec (object, pspec);
  return TRUE;
}

/**
 * tally_properties_set_boolean:
 * @object: the instance
 * @field: (inout): the property's #gboolean field
 * @value: the new value; any non-zero value is stored as %TRUE
 * @pspec: the property, for g_object_notify_by_pspec()
 *
 * Sets a boolean property's field and notifies @pspec when it changed.
 *
 * Returns: %TRUE when the value changed
 */
gboolean
tally_properties_set_boolean (GObject    *object,
                              gboolean   *field,
                              gboolean    value,
                              GParamSpec *pspec)
{
  value = !!value;
  return set_scalar (object, field, &value, sizeof value, pspec);
}

/**
 * tally_properties_set_uint:
 * @object: the instance
 * @field: (inout): the property's #guint field
 * @value: the new value
 * @pspec: the property, for g_object_notify_by_pspec()
 *
 * Sets an unsigned integer property's field and notifies @pspec when it
 * changed.
 *
 * Returns: %TRUE when the value changed
 */
gboolean
tally_properties_set_uint (GObject    *object,
                           guint      *field,
                           guint       value,
                           GParamSpec *pspec)
{
  return set_scalar (object, field, &value, sizeof value, pspec);
}

/**
 * tally_properties_set_int64:
 * @object: the instance
 * @field: (inout): the property's #gint64 field
 * @value: the new value
 * @pspec: the property, for g_object_notify_by_pspec()
 *
 * Sets a 64-bit integer property's field and notifies @pspec when it
 * changed.
 *
 * Returns: %TRUE when the value changed
 */
gboolean
tally_properties_set_int64 (GObject    *object,
                            gint64     *field,
                            gint64      value,
                            GParamSpec *pspec)
{
  return set_scalar (object, field, &value, sizeof value, pspec);
}
