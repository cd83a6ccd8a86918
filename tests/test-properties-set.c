/* SPDX-License-Identifier: GPL-3.0-or-later */

#include "config.h"

#include "tally-block.h"
#include "tally-properties.h"

/* The setters of tally-properties.h that TallyAgent, TallyClient and
 * TallyBlock share instead of private copies (issue 11): each stores the
 * value, notifies once when it changed and not at all when it did not,
 * and says which it was. */

/* The fields live here, in the test: a setter only needs an object to
 * notify and the pspec to notify it by, here a block's. */
typedef struct {
  TallyBlock *block;
  guint       notified;
} Fixture;

static void
count_cb (GObject    *object,
          GParamSpec *pspec,
          guint      *notified)
{
  (*notified)++;
}

/* The block's property @name, whose notifications add to f->notified. */
static GParamSpec *
watch (Fixture    *f,
       const char *name)
{
  g_autofree char *signal = g_strconcat ("notify::", name, NULL);

  f->block = tally_block_new (TALLY_BLOCK_TEXT, NULL);
  f->notified = 0;
  g_signal_connect (f->block, signal, G_CALLBACK (count_cb), &f->notified);
  return g_object_class_find_property (G_OBJECT_GET_CLASS (f->block), name);
}

static void
test_string (void)
{
  Fixture f;
  GParamSpec *pspec = watch (&f, "state");
  GObject *object = G_OBJECT (f.block);
  g_autofree char *field = NULL;

  g_assert_true (tally_properties_set_string (object, &field, "sales", pspec));
  g_assert_cmpstr (field, ==, "sales");
  g_assert_cmpuint (f.notified, ==, 1);

  /* An equal string in another buffer changes nothing. */
  {
    g_autofree char *same = g_strdup ("sales");

    g_assert_false (tally_properties_set_string (object, &field, same, pspec));
    g_assert_true (field != same);
  }
  g_assert_cmpuint (f.notified, ==, 1);

  /* The taking variant owns what it is given, kept or freed. */
  g_assert_false (tally_properties_take_string (object, &field, g_strdup ("sales"), pspec));
  g_assert_true (tally_properties_take_string (object, &field, g_strdup ("costs"), pspec));
  g_assert_cmpstr (field, ==, "costs");
  g_assert_cmpuint (f.notified, ==, 2);

  g_assert_true (tally_properties_set_string (object, &field, NULL, pspec));
  g_assert_null (field);
  g_assert_false (tally_properties_take_string (object, &field, NULL, pspec));
  g_assert_cmpuint (f.notified, ==, 3);

  g_object_unref (f.block);
}

static void
test_boolean (void)
{
  Fixture f;
  GParamSpec *pspec = watch (&f, "finished");
  GObject *object = G_OBJECT (f.block);
  gboolean field = FALSE;

  g_assert_true (tally_properties_set_boolean (object, &field, TRUE, pspec));
  g_assert_cmpint (field, ==, TRUE);
  /* Any non-zero value is TRUE, so 2 is no change. */
  g_assert_false (tally_properties_set_boolean (object, &field, 2, pspec));
  g_assert_cmpint (field, ==, TRUE);
  g_assert_cmpuint (f.notified, ==, 1);
  g_assert_true (tally_properties_set_boolean (object, &field, FALSE, pspec));
  g_assert_cmpuint (f.notified, ==, 2);

  g_object_unref (f.block);
}

static void
test_numbers (void)
{
  Fixture f;
  GParamSpec *pspec = watch (&f, "word-count");
  GObject *object = G_OBJECT (f.block);
  guint count = 0;
  gint64 total = 0;

  g_assert_false (tally_properties_set_uint (object, &count, 0, pspec));
  g_assert_true (tally_properties_set_uint (object, &count, G_MAXUINT, pspec));
  g_assert_false (tally_properties_set_uint (object, &count, G_MAXUINT, pspec));
  g_assert_cmpuint (count, ==, G_MAXUINT);
  g_assert_cmpuint (f.notified, ==, 1);

  g_assert_true (tally_properties_set_int64 (object, &total, -5, pspec));
  g_assert_true (tally_properties_set_int64 (object, &total, G_MAXINT64, pspec));
  g_assert_false (tally_properties_set_int64 (object, &total, G_MAXINT64, pspec));
  g_assert_cmpint (total, ==, G_MAXINT64);
  g_assert_cmpuint (f.notified, ==, 3);

  g_object_unref (f.block);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tally/properties-set/string", test_string);
  g_test_add_func ("/tally/properties-set/boolean", test_boolean);
  g_test_add_func ("/tally/properties-set/numbers", test_numbers);

  return g_test_run ();
}
