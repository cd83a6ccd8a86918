/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tally-application.h"
#include "tally-window.h"

G_BEGIN_DECLS

/* A harness for tests that run the real `tally` application in this
 * process under Xvfb (docs/testing.md): an isolated home, the app's own
 * command line, a body run once its first window is up. */

/* A store in a fresh temporary folder, for g_test_add(). */
typedef struct {
  char *dir;
  char *store_path;   /* dir/tally.db, not created */
} TallyTestAppFixture;

typedef void (*TallyTestAppLookFunc) (GtkWidget *view,
                                      gpointer   data);

typedef void (*TallyTestAppBody) (TallyApplication *app,
                                  TallyWindow      *window,
                                  gpointer          data);

char *tally_test_app_init       (int                 *argc,
                                 char              ***argv);
int   tally_test_app_run        (const char * const  *args,
                                 TallyTestAppBody     body,
                                 gpointer             data);
int   tally_test_app_run_with_network (const char * const *args,
                                       int                 network_override,
                                       TallyTestAppBody    body,
                                       gpointer            data);
int   tally_test_app_run_before_frame (const char * const *args,
                                       TallyTestAppBody    before_frame,
                                       TallyTestAppBody    body,
                                       gpointer            data);
void  tally_test_app_fixture_set_up    (TallyTestAppFixture *fixture,
                                       gconstpointer        data);
void  tally_test_app_fixture_tear_down (TallyTestAppFixture *fixture,
                                       gconstpointer        data);
void  tally_test_app_save_light_dark (GtkWidget       *widget,
                                      const char      *stem);
void  tally_test_app_scroll_through (GtkWidget            *view,
                                     TallyTestAppLookFunc  look,
                                     gpointer              data);
void  tally_test_remove_tree    (const char          *path);

G_END_DECLS
