/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-window"

#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "tally-export-dialog.h"

/*
 * Exports from the window (issue 12 §3): the save chooser with a format
 * choice and an "Include thinking" switch, the name's suffix made to follow
 * the chosen format (and a question before that replaces a file the
 * chooser did not ask about), the toast that offers to open what was written (a
 * failure shows tally_error_dialog_show()). The export itself is
 * libtally-report's, in every format (tally_report_export_session_async(),
 * tally_report_export_file_async(), docs/reports.md);
 * tally_export_format_to_report() names its format.
 */

static const struct {
  const char        *id;
  const char        *suffix;
  TallyReportFormat  report;
} formats[] = {
  [TALLY_EXPORT_MARKDOWN] = { "md", ".md", TALLY_REPORT_FORMAT_MD },
  [TALLY_EXPORT_HTML] = { "html", ".html", TALLY_REPORT_FORMAT_HTML },
  [TALLY_EXPORT_PDF] = { "pdf", ".pdf", TALLY_REPORT_FORMAT_PDF },
  [TALLY_EXPORT_JSONL] = { "jsonl", ".jsonl", TALLY_REPORT_FORMAT_JSONL },
};

/**
 * tally_export_format_get_id:
 * @format: a #TallyExportFormat
 *
 * Returns: (transfer none): the format's short name (`md`, `html`, `pdf`,
 *   `jsonl`), the one `tally-cli --format` takes
 */
const char *
tally_export_format_get_id (TallyExportFormat format)
{
  g_return_val_if_fail ((guint) format < G_N_ELEMENTS (formats), NULL);
  return formats[format].id;
}

/**
 * tally_export_format_to_report:
 * @format: a #TallyExportFormat
 *
 * Returns: the #TallyReportFormat that libtally-report writes @format as,
 *   for tally_report_export_session_async() (all four) and
 *   tally_report_export_file_async() (HTML and PDF)
 */
TallyReportFormat
tally_export_format_to_report (TallyExportFormat format)
{
  g_return_val_if_fail ((guint) format < G_N_ELEMENTS (formats), TALLY_REPORT_FORMAT_HTML);
  return formats[format].report;
}

/**
 * tally_export_format_from_id:
 * @id: (nullable): a short name, as from tally_export_format_get_id()
 * @format: (out): where the format goes
 *
 * Returns: %FALSE (and @format untouched) when @id names no format
 */
gboolean
tally_export_format_from_id (const char        *id,
                             TallyExportFormat *format)
{
  for (guint i = 0; i < G_N_ELEMENTS (formats); i++)
    if (g_strcmp0 (id, formats[i].id) == 0)
      {
        *format = i;
        return TRUE;
      }
  return FALSE;
}

/**
 * tally_export_file_with_suffix:
 * @file: (transfer none): the file the analyst named
 * @format: the format chosen
 *
 * Makes the name's suffix follow the format: a suffix of another export
 * format (`.md`, `.html`, `.pdf`, `.jsonl`, any case, also `.htm`) is
 * replaced, a name with none gets one (`report` → `report.pdf`, but also
 * `q2.final` → `q2.final.pdf`).
 *
 * Returns: (transfer full): @file itself (a new reference) when its name
 *   already ends in the format's suffix, else a file next to it
 */
GFile *
tally_export_file_with_suffix (GFile             *file,
                               TallyExportFormat  format)
{
  g_autofree char *name = NULL;
  g_autofree char *lower = NULL;
  g_autofree char *renamed = NULL;
  g_autoptr(GFile) parent = NULL;
  gsize stem;

  g_return_val_if_fail (G_IS_FILE (file), NULL);
  g_return_val_if_fail ((guint) format < G_N_ELEMENTS (formats), NULL);

  name = g_file_get_basename (file);
  lower = g_ascii_strdown (name, -1);
  if (g_str_has_suffix (lower, formats[format].suffix))
    return g_object_ref (file);

  stem = strlen (name);
  for (guint i = 0; i < G_N_ELEMENTS (formats); i++)
    if (g_str_has_suffix (lower, formats[i].suffix) && strlen (lower) > strlen (formats[i].suffix))
      stem = strlen (name) - strlen (formats[i].suffix);
  if (g_str_has_suffix (lower, ".htm") && strlen (lower) > 4)
    stem = strlen (name) - 4;

  renamed = g_strdup_printf ("%.*s%s", (int) stem, name, formats[format].suffix);
  parent = g_file_get_parent (file);
  return parent != NULL ? g_file_get_child (parent, renamed) : g_file_new_for_path (renamed);
}

/* Whether @folder is in Tally's own data folder (a session's default
 * workspace is a hidden folder named by an id there): an export saved
 * there by default would be hard to find again. */
static gboolean
is_application_data (GFile *folder)
{
  g_autoptr(GFile) data = g_file_new_build_filename (g_get_user_data_dir (), "tally", NULL);

  return g_file_equal (folder, data) || g_file_has_prefix (folder, data);
}

/**
 * tally_export_dialog_new_chooser:
 * @owner: the widget asking; its window is the chooser's parent
 * @title: the chooser's title
 * @base_name: the name offered, without a suffix
 * @format: the format offered first: its suffix ends the name offered
 * @session: %TRUE for a session export: a "Format" choice (Markdown,
 *   HTML, PDF or JSON Lines, starting at @format) and an "Include
 *   thinking" switch; %FALSE for a report, whose format was picked from
 *   the window's menu before the chooser opened, so it has no choice
 * @folder: (nullable): the folder it opens in (the report's, the
 *   session's workspace), when it exists and is not inside Tally's own
 *   data folder (default workspaces are hidden there); else the
 *   chooser's own choice
 *
 * A modal save chooser (a portal inside the Flatpak) offering @base_name
 * with @format's suffix. Read the choices with
 * tally_export_dialog_get_format() and
 * tally_export_dialog_get_include_thinking(), and the file to write with
 * tally_export_dialog_dup_output().
 *
 * A report's chooser has no "Format" choice because GTK 4.8's own dialog
 * (used when there is no portal) shows a choice at its first option
 * whatever was set before it opened: "Export as PDF…" would have written
 * HTML.
 *
 * Returns: (transfer full): the chooser, not yet shown
 */
GtkFileChooserNative *
tally_export_dialog_new_chooser (GtkWidget         *owner,
                                 const char        *title,
                                 const char        *base_name,
                                 TallyExportFormat  format,
                                 gboolean           session,
                                 GFile             *folder)
{
  static const char *session_ids[] = { "md", "html", "pdf", "jsonl", NULL };
  const char *session_labels[] = { _("Markdown"), _("HTML"), _("PDF"), _("JSON Lines"), NULL };
  GtkRoot *root = gtk_widget_get_root (owner);
  GtkFileChooserNative *chooser;
  g_autofree char *name = NULL;

  g_return_val_if_fail ((guint) format < G_N_ELEMENTS (formats), NULL);

  chooser = gtk_file_chooser_native_new (title, GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                                         GTK_FILE_CHOOSER_ACTION_SAVE, _("_Export"), _("_Cancel"));
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
  if (session)
    {
      gtk_file_chooser_add_choice (GTK_FILE_CHOOSER (chooser), "format", _("Format"),
                                   session_ids, session_labels);
      gtk_file_chooser_set_choice (GTK_FILE_CHOOSER (chooser), "format", formats[format].id);
      gtk_file_chooser_add_choice (GTK_FILE_CHOOSER (chooser), "thinking", _("Include thinking"), NULL, NULL);
      gtk_file_chooser_set_choice (GTK_FILE_CHOOSER (chooser), "thinking", "false");
    }
  g_object_set_data (G_OBJECT (chooser), "tally-export-has-format-choice", GINT_TO_POINTER (session));

  if (folder != NULL && g_file_query_file_type (folder, G_FILE_QUERY_INFO_NONE, NULL) == G_FILE_TYPE_DIRECTORY &&
      !is_application_data (folder))
    {
      g_autoptr(GError) error = NULL;

      if (!gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (chooser), folder, &error))
        g_debug ("The export chooser keeps its own folder: %s", error->message);
    }
  name = g_strconcat (base_name, formats[format].suffix, NULL);
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (chooser), name);
  return chooser;
}

/**
 * tally_export_dialog_get_format:
 * @chooser: a chooser from tally_export_dialog_new_chooser()
 * @fallback: the format when none was chosen, and a report chooser's
 *   format (it has no choice)
 *
 * Returns: the format chosen
 */
TallyExportFormat
tally_export_dialog_get_format (GtkFileChooser    *chooser,
                                TallyExportFormat  fallback)
{
  TallyExportFormat format = fallback;

  g_return_val_if_fail (GTK_IS_FILE_CHOOSER (chooser), fallback);

  if (g_object_get_data (G_OBJECT (chooser), "tally-export-has-format-choice") != NULL)
    tally_export_format_from_id (gtk_file_chooser_get_choice (chooser, "format"), &format);
  return format;
}

/**
 * tally_export_dialog_dup_output:
 * @chooser: a chooser from tally_export_dialog_new_chooser()
 * @response: the response it gave (`GtkNativeDialog::response`)
 * @fallback: the format when none was chosen
 * @format: (out): the format chosen (tally_export_dialog_get_format()),
 *   also set when the chooser was cancelled
 * @unasked: (out) (optional): set to %TRUE when the file returned exists
 *   and is not the one the analyst named (its suffix was changed): the
 *   chooser asked before replacing the file it was given, not this one,
 *   so ask with tally_export_dialog_ask_replace() before writing it
 *
 * The file to write: the one the analyst named, with the suffix of the
 * format chosen (tally_export_file_with_suffix()).
 *
 * Returns: (transfer full) (nullable): the file, or %NULL when @response
 *   is not %GTK_RESPONSE_ACCEPT or no file was named
 */
GFile *
tally_export_dialog_dup_output (GtkNativeDialog   *chooser,
                                int                response,
                                TallyExportFormat  fallback,
                                TallyExportFormat *format,
                                gboolean          *unasked)
{
  g_autoptr(GFile) chosen = NULL;
  g_autoptr(GFile) output = NULL;

  g_return_val_if_fail (GTK_IS_FILE_CHOOSER (chooser), NULL);
  g_return_val_if_fail (format != NULL, NULL);

  if (unasked != NULL)
    *unasked = FALSE;
  *format = tally_export_dialog_get_format (GTK_FILE_CHOOSER (chooser), fallback);
  if (response == GTK_RESPONSE_ACCEPT)
    chosen = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (chooser));
  if (chosen == NULL)
    return NULL;
  output = tally_export_file_with_suffix (chosen, *format);
  /* A folder of that name is not offered for replacing: the export then
   * fails and says it is a folder. */
  if (unasked != NULL)
    {
      GFileType type = g_file_query_file_type (output, G_FILE_QUERY_INFO_NOFOLLOW_SYMLINKS, NULL);

      *unasked = !g_file_equal (output, chosen) && type != G_FILE_TYPE_UNKNOWN && type != G_FILE_TYPE_DIRECTORY;
    }
  return g_steal_pointer (&output);
}

typedef struct {
  GWeakRef               owner;   /* the question does not keep it alive */
  TallyExportReplaceFunc replace;
  gpointer               user_data;
  GDestroyNotify         destroy;
} ReplaceQuestion;

static void
replace_question_free (gpointer data,
                       GClosure *closure)
{
  ReplaceQuestion *question = data;

  g_weak_ref_clear (&question->owner);
  if (question->destroy != NULL)
    question->destroy (question->user_data);
  g_free (question);
}

static void
replace_response_cb (AdwMessageDialog *dialog,
                     const char       *response,
                     ReplaceQuestion  *question)
{
  g_autoptr(GtkWidget) owner = g_weak_ref_get (&question->owner);

  if (owner != NULL && g_strcmp0 (response, "replace") == 0)
    question->replace (owner, question->user_data);
}

/**
 * tally_export_dialog_ask_replace:
 * @owner: the widget asking; its window is the dialog's parent
 * @output: the file that exists and would be replaced
 * @replace: (scope notified): writes the export; called once, if the
 *   analyst chooses *Replace* while @owner is alive
 * @user_data: (closure): data for @replace
 * @destroy: frees @user_data when the dialog is gone, whatever the answer
 *
 * Asks, in a modal dialog, whether to replace @output, as the save chooser
 * asks for the name it was given. *Cancel*, Escape or closing the dialog
 * writes nothing. The dialog closes with @owner's window, and the
 * question keeps no reference on @owner.
 */
void
tally_export_dialog_ask_replace (GtkWidget              *owner,
                                 GFile                  *output,
                                 TallyExportReplaceFunc  replace,
                                 gpointer                user_data,
                                 GDestroyNotify          destroy)
{
  GtkRoot *root;
  ReplaceQuestion *question;
  g_autofree char *basename = NULL;
  g_autofree char *name = NULL;
  g_autofree char *heading = NULL;
  g_autofree char *body = NULL;
  g_autoptr(GFile) parent = NULL;
  g_autofree char *folder = NULL;
  GtkWidget *dialog;

  g_return_if_fail (GTK_IS_WIDGET (owner));
  g_return_if_fail (G_IS_FILE (output));
  g_return_if_fail (replace != NULL);

  root = gtk_widget_get_root (owner);
  basename = g_file_get_basename (output);
  name = g_filename_display_name (basename);
  parent = g_file_get_parent (output);
  folder = parent != NULL ? g_file_get_parse_name (parent) : g_strdup ("/");
  /* TRANSLATORS: %s is a file name */
  heading = g_strdup_printf (_("Replace “%s”?"), name);
  /* TRANSLATORS: %s is a folder; the export's name was given the chosen
   * format's suffix, and a file of that name is there already */
  body = g_strdup_printf (_("A file with this name already exists in “%s”. Replacing it overwrites its contents."),
                          folder);
  dialog = adw_message_dialog_new (GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL, heading, body);
  adw_message_dialog_add_responses (ADW_MESSAGE_DIALOG (dialog),
                                    "cancel", _("_Cancel"),
                                    "replace", _("_Replace"),
                                    NULL);
  adw_message_dialog_set_response_appearance (ADW_MESSAGE_DIALOG (dialog), "replace",
                                              ADW_RESPONSE_DESTRUCTIVE);
  adw_message_dialog_set_default_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
  adw_message_dialog_set_close_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
  gtk_window_set_modal (GTK_WINDOW (dialog), TRUE);
  gtk_window_set_destroy_with_parent (GTK_WINDOW (dialog), TRUE);

  question = g_new0 (ReplaceQuestion, 1);
  g_weak_ref_init (&question->owner, owner);
  question->replace = replace;
  question->user_data = user_data;
  question->destroy = destroy;
  g_signal_connect_data (dialog, "response", G_CALLBACK (replace_response_cb), question,
                         replace_question_free, 0);
  gtk_window_present (GTK_WINDOW (dialog));
}

/**
 * tally_export_dialog_get_include_thinking:
 * @chooser: a chooser from tally_export_dialog_new_chooser()
 *
 * Returns: whether "Include thinking" was switched on
 */
gboolean
tally_export_dialog_get_include_thinking (GtkFileChooser *chooser)
{
  g_return_val_if_fail (GTK_IS_FILE_CHOOSER (chooser), FALSE);
  return g_strcmp0 (gtk_file_chooser_get_choice (chooser, "thinking"), "true") == 0;
}

/**
 * tally_export_dialog_new_done_toast:
 * @output: (transfer none): the file written
 * @open_action: the action, with a string parameter (the file's URI),
 *   that the toast's *Open* button activates, e.g. `win.open-file`
 *
 * Returns: (transfer full): a toast saying what was written, with *Open*
 */
AdwToast *
tally_export_dialog_new_done_toast (GFile      *output,
                                    const char *open_action)
{
  g_autofree char *name = g_file_get_basename (output);
  g_autofree char *uri = g_file_get_uri (output);
  g_autofree char *title = NULL;
  AdwToast *toast;

  /* Translators: a toast after an export; %s is the file's name */
  title = g_markup_printf_escaped (_("Exported “%s”"), name);
  toast = adw_toast_new (title);
  adw_toast_set_button_label (toast, _("_Open"));
  adw_toast_set_action_name (toast, open_action);
  adw_toast_set_action_target_value (toast, g_variant_new_string (uri));
  return toast;
}

/**
 * tally_export_job_new:
 * @owner: (type GObject): the window that asks
 * @output: (transfer none): the file to write
 *
 * Returns: (transfer full): a job holding a reference to both
 */
TallyExportJob *
tally_export_job_new (gpointer  owner,
                      GFile    *output)
{
  TallyExportJob *job = g_new0 (TallyExportJob, 1);

  job->owner = g_object_ref (owner);
  job->output = g_object_ref (output);
  return job;
}

/**
 * tally_export_job_free:
 * @job: (transfer full): a job from tally_export_job_new()
 *
 * Drops the job's references and frees it.
 */
void
tally_export_job_free (TallyExportJob *job)
{
  g_clear_object (&job->owner);
  g_clear_object (&job->output);
  g_free (job);
}
