/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tally-composer.h"
#include "tally-data-import-bar.h"
#include "tally-export-dialog.h"
#include "tally-session-row.h"
#include "tally-store.h"
#include "tally-transcript-view.h"
#include "tally-window.h"

G_BEGIN_DECLS

/*
 * TallyWindow is split in files sharing this header: tally-window.c (the
 * session shown, sending, the header's pickers), tally-window-actions.c
 * (the win.* and session.* actions and which of them are enabled),
 * tally-window-sidebar.c (saved sessions, search, rename, delete with
 * undo), tally-window-errors.c (failed turns, the offline and store
 * banners, salvage), tally-window-open.c (opening a saved session),
 * tally-window-title.c (the title and the context it names),
 * tally-window-models.c (the model picker), tally-window-data.c (data
 * files), tally-window-ledger.c (the ledger and sensitive columns),
 * tally-window-notes.c (database notes) and tally-window-testing.c (the
 * tests' accessors).
 */
struct _TallyWindow
{
  AdwApplicationWindow  parent_instance;

  TallyApplication     *app;
  GSettings            *settings;
  GCancellable         *cancellable;

  /* Template widgets */
  AdwToastOverlay      *toast_overlay;
  AdwFlap              *flap;
  GtkSearchEntry       *search_entry;
  GtkStack             *sidebar_stack;
  GtkListBox           *session_list;
  GtkLabel             *store_status_label;
  GtkToggleButton      *sidebar_button;
  GtkMenuButton        *title_button;
  AdwWindowTitle       *window_title;
  GtkToggleButton      *thinking_button;
  GtkDropDown          *mode_dropdown;
  GtkDropDown          *model_dropdown;
  GtkRevealer          *offline_revealer;
  GtkLabel             *offline_label;
  GtkRevealer          *store_revealer;
  GtkLabel             *store_label;
  GtkButton            *salvage_button;
  GtkRevealer          *role_revealer;
  AdwBin               *role_text_bin;
  GtkStack             *session_stack;
  AdwBin               *welcome_bin;
  /* The first-launch page, built the first time it is shown (NULL before) */
  AdwStatusPage        *welcome_page;
  AdwPasswordEntryRow  *welcome_key_row;
  GtkScrolledWindow    *empty_page;
  AdwBin               *empty_bin;
  GtkLabel             *empty_description;
  GtkBox               *suggestions_box;
  GtkListBox           *suggestion_list;
  TallyTranscriptView  *transcript_view;
  TallyComposer        *composer;
  /* The title's popover and its rows: NULL until it first opens
   * (_tally_window_ensure_context_popover()) */
  GtkPopover           *context_popover;
  GtkMenuButton        *main_menu_button;
  GMenuModel           *main_menu;      /* its model, given on first use */
  AdwActionRow         *database_row;
  AdwActionRow         *workspace_row;
  GtkListBox           *compact_list;
  AdwSqueezer          *picker_squeezer;
  AdwComboRow          *model_row;
  AdwComboRow          *mode_row;
  GtkSwitch            *thinking_switch;

  /* The session shown; NULL while a new one waits for its first message */
  TallySession         *session;
  GListStore           *empty_transcript;
  char                 *database;
  char                 *workspace;      /* NULL: the session's own folder */
  char                 *model;
  GHashTable           *drafts;         /* session id ("" for new) → text */
  char                 *deleted_current; /* id of a deleted session that was shown */
  char                 *salvage_result;  /* the store banner's text after a salvage */
  guint                 n_role_warnings; /* role cards shown (tests) */

  /* The saved session being opened (tally-window-open.c) */
  GCancellable         *open_cancellable;
  char                 *opening_id;

  /* The running turn */
  TallySession         *busy_session;
  GCancellable         *turn_cancellable;

  /* Its automatic retries (tally-window-errors.c) */
  TallyAgent           *watched_agent;
  guint                 countdown_id;
  gint64                retry_deadline_us; /* monotonic */
  guint                 retry_attempt;     /* the attempt about to start, 2 = first retry */
  guint                 retry_attempts;    /* attempts allowed */

  /* The sidebar */
  GHashTable           *rows;           /* id → TallySessionRow (borrowed) */
  GHashTable           *pending_deletes; /* id → TallySessionInfo, until the toast goes */
  GHashTable           *search_hits;    /* id → snippet, while searching */
  char                 *search_text;    /* casefolded, NULL when not searching */
  GCancellable         *list_cancellable;
  GCancellable         *search_cancellable;
  guint                 refreshing;
  guint                 rows_idle;      /* makes the rows of a listing a batch at a time */
  guint                 dates_timeout;  /* keeps "Just now" honest */

  /* Misc */
  gboolean              closed;         /* async answers after this are dropped */
  gboolean              compact;        /* pickers moved into the title popover */
  guint                 compact_idle;
  AdwToast             *last_toast;     /* weak */
  char                 *last_toast_title;
  gboolean              fetching_models;
  gboolean              updating_model;
};

/* tally-window.c */
void             _tally_window_reveal_banner          (GtkRevealer      *revealer,
                                                       gboolean          reveal);
void             _tally_window_ensure_context_popover (TallyWindow      *self);

/* tally-window-title.c */
void             _tally_window_update_title           (TallyWindow      *self);
void             _tally_window_update_context         (TallyWindow      *self);
void             _tally_window_update_context_rows    (TallyWindow      *self);

/* tally-window-models.c */
void             _tally_window_select_model           (TallyWindow      *self,
                                                       const char       *model);
void             _tally_window_maybe_fetch_models     (TallyWindow      *self);
void             _tally_window_connect_model_picker   (TallyWindow      *self);
void             _tally_window_stop_turn              (TallyWindow      *self);
void             _tally_window_check_role             (TallyWindow      *self);
void             _tally_window_restore_pg_password    (TallyWindow      *self);

/* tally-window.c: retry in place */
void             _tally_window_run_retry              (TallyWindow      *self,
                                                       const char       *turn_id,
                                                       const char       *prompt,
                                                       TallyMode         mode,
                                                       gboolean          thinking);

/* tally-window.c: a session tally-window-open.c opened */
void             _tally_window_show_opened            (TallyWindow      *self,
                                                       TallySession     *session,
                                                       gboolean          reopen);

/* tally-window-open.c: opening a saved session off the main loop */
void             _tally_window_reopen_session         (TallyWindow      *self);
void             _tally_window_cancel_open            (TallyWindow      *self);
gboolean         _tally_window_is_opening             (TallyWindow      *self);

/* tally-window-errors.c */
void             _tally_window_errors_class_init      (GtkWidgetClass   *widget_class);
void             _tally_window_update_banners         (TallyWindow      *self);
void             _tally_window_watch_turn             (TallyWindow      *self,
                                                       TallySession     *session);
gboolean         _tally_window_retry_turn             (TallyWindow      *self,
                                                       const char       *turn_id);
void             _tally_window_update_offline         (TallyWindow      *self);
gboolean         _tally_window_offline_blocks_send    (TallyWindow      *self);

/* tally-window-actions.c */
void             _tally_window_actions_class_init     (GtkWidgetClass   *widget_class);
void             _tally_window_update_actions         (TallyWindow      *self);

/* tally-window-data.c: data files (docs/data-files.md) */
void                _tally_window_open_data_files_activate (TallyWindow        *self,
                                                            GVariant           *parameter);
void                _tally_window_import_data_files        (TallyWindow        *self,
                                                            const char * const *paths);
TallyDataImportBar *_tally_window_get_data_import_bar      (TallyWindow        *self);
gboolean            _tally_window_is_importing             (TallyWindow        *self);

/* tally-window-notes.c: the analyst's notes (docs/notes.md) */
void             _tally_window_database_notes_activate (TallyWindow     *self,
                                                        GVariant        *parameter);
char            *_tally_window_dup_profile_store_dir   (TallyWindow     *self,
                                                        const char      *missing);

/* tally-window-ledger.c: what leaves the machine (docs/ledger.md) */
void             _tally_window_sent_to_api_activate   (TallyWindow      *self,
                                                       GVariant         *parameter);
void             _tally_window_sensitive_columns_activate (TallyWindow  *self,
                                                           GVariant     *parameter);

/* tally-window-sidebar.c */
void             _tally_window_sidebar_class_init     (GtkWidgetClass   *widget_class);
void             _tally_window_sidebar_init           (TallyWindow      *self);
void             _tally_window_refresh_sessions       (TallyWindow      *self);
void             _tally_window_refilter               (TallyWindow      *self);
TallySessionRow *_tally_window_find_row               (TallyWindow      *self,
                                                       const char       *id);
void             _tally_window_select_row_for         (TallyWindow      *self,
                                                       const char       *id);
const char      *_tally_window_get_session_title       (TallyWindow      *self);
void             _tally_window_add_provisional_row    (TallyWindow      *self,
                                                       const char       *id,
                                                       const char       *text);
void             _tally_window_delete_with_undo       (TallyWindow      *self,
                                                       TallySessionInfo *info);
void             _tally_window_undo_delete            (TallyWindow      *self,
                                                       const char       *id);
void             _tally_window_commit_pending_deletes (TallyWindow      *self);
void             _tally_window_rename_saved_session_activate (TallyWindow *self,
                                                              GVariant    *parameter);
void             _tally_window_pin_saved_session_activate    (TallyWindow *self,
                                                              GVariant    *parameter);
void             _tally_window_export_saved_session_activate (TallyWindow *self,
                                                              GVariant    *parameter);
void             _tally_window_delete_saved_session_activate (TallyWindow *self,
                                                              GVariant    *parameter);


/*
 * Accessors for the end-to-end test (tests/test-app.c): the widgets it
 * drives and the state it checks. Not for the application's own code.
 */
TallyComposer       *_tally_window_get_composer        (TallyWindow *self);
TallyTranscriptView *_tally_window_get_transcript_view (TallyWindow *self);
GtkListBox          *_tally_window_get_session_list    (TallyWindow *self);
GtkDropDown         *_tally_window_get_model_dropdown  (TallyWindow *self);
const char          *_tally_window_get_page            (TallyWindow *self);
const char          *_tally_window_get_sidebar_page    (TallyWindow *self);
AdwToast            *_tally_window_get_last_toast      (TallyWindow *self);
const char          *_tally_window_get_last_toast_title (TallyWindow *self);
GtkSearchEntry      *_tally_window_get_search_entry    (TallyWindow *self);
gboolean             _tally_window_is_refreshing       (TallyWindow *self);
AdwFlap             *_tally_window_get_flap            (TallyWindow *self);
GtkToggleButton     *_tally_window_get_thinking_button (TallyWindow *self);
GtkDropDown         *_tally_window_get_mode_dropdown   (TallyWindow *self);
gboolean             _tally_window_get_compact         (TallyWindow *self);
guint                _tally_window_get_n_role_warnings (TallyWindow *self);
gboolean             _tally_window_get_role_warning_shown (TallyWindow *self);

/* tally-window-errors.c: the store banner's text after a salvage */
char                *_tally_window_dup_salvage_message (const TallySalvageReport *report,
                                                        const char               *out_path);

/* tally-window-actions.c: the session export (issue 12 §3) */
void                 _tally_window_export_session_to   (TallyWindow       *self,
                                                        TallyExportFormat  format,
                                                        gboolean           include_thinking,
                                                        GFile             *output);
guint                _tally_window_get_n_exports_done  (TallyWindow       *self);
void                 _tally_window_export_session      (TallyWindow       *self,
                                                        const char        *session_id,
                                                        const char        *title);
GtkFileChooser      *_tally_window_get_export_chooser  (TallyWindow       *self);
const char          *_tally_window_get_export_chooser_session (TallyWindow *self);
void                 _tally_window_export_session_id_to (TallyWindow       *self,
                                                         const char        *session_id,
                                                         TallyExportFormat  format,
                                                         gboolean           include_thinking,
                                                         GFile             *output);

G_END_DECLS
