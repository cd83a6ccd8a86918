/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-transcript-view"

#include "config.h"

#include <adwaita.h>

#include <glib/gi18n.h>

#include "tally-file-chip.h"

#include "tally-error-dialog.h"

/**
 * TallyFileChip:
 *
 * A `file` block (docs/architecture.md §9.1): a file a tool wrote in the
 * turn (`Write`, `Edit`, or one of the files of `chart_created`), shown as
 * a chip with an icon for its content type, its name, its size and what
 * kind of file it is, an *Open* button and a *Show in Folder* button.
 *
 * The block holds only the path, as the tool named it: absolute, or
 * relative to the session's workspace (#TallyBlockWidget:workspace). What
 * the chip says about the file is read from the disk when the block is
 * bound, when the chip is mapped and before each action, so a saved
 * session shows the same chips offline, and a file that was deleted since
 * is shown dimmed as "Deleted" with its buttons off, never as a failed
 * click.
 *
 * Actions: `file.open` opens a Markdown file in the window's report
 * preview (`win.preview-report` with the absolute path) and any other
 * file, or a Markdown file where no window offers a preview, with the
 * application the desktop picks (tally_file_chip_open_with_system());
 * `file.show-in-folder` asks the file manager to show the file
 * (tally_file_chip_show_in_folder()).
 */

struct _TallyFileChip
{
  TallyBlockWidget  parent_instance;

  /* Template */
  GtkWidget        *box;
  GtkImage         *icon;
  GtkLabel         *name_label;
  GtkLabel         *detail_label;

  char             *name;
  gboolean          deleted;
  gboolean          markdown;
};

G_DEFINE_FINAL_TYPE (TallyFileChip, tally_file_chip, TALLY_TYPE_BLOCK_WIDGET)

/* Opening and showing files */

typedef struct {
  GtkWindow *parent;   /* (nullable) */
  char      *name;
} LaunchData;

static void
launch_data_free (LaunchData *data)
{
  g_clear_object (&data->parent);
  g_free (data->name);
  g_free (data);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LaunchData, launch_data_free)

static LaunchData *
launch_data_new (GtkWidget *owner,
                 GFile     *file)
{
  LaunchData *data = g_new0 (LaunchData, 1);
  GtkRoot *root = owner != NULL ? gtk_widget_get_root (owner) : NULL;

  if (GTK_IS_WINDOW (root))
    data->parent = g_object_ref (GTK_WINDOW (root));
  data->name = g_file_get_basename (file);
  return data;
}

static void
show_launch_error (LaunchData   *data,
                   const GError *error)
{
  g_autofree char *heading = NULL;

  /* Translators: the heading of an error; %s is a file name */
  heading = g_strdup_printf (_("Could Not Open “%s”"), data->name);
  tally_error_dialog_show (GTK_WIDGET (data->parent), heading, error->message);
}

static void
shown_cb (GObject      *object,
          GAsyncResult *result,
          gpointer      user_data)
{
  g_autoptr(LaunchData) data = user_data;
  g_autoptr(GError) error = NULL;

  if (!gtk_show_uri_full_finish (data->parent, result, &error) &&
      !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) &&
      !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_FAILED_HANDLED))
    show_launch_error (data, error);
}

static void
show_uri (LaunchData *data,
          GFile      *file)
{
  g_autofree char *uri = g_file_get_uri (file);

  gtk_show_uri_full (data->parent, uri, GDK_CURRENT_TIME, NULL, shown_cb, data);
}

/**
 * tally_file_chip_open_with_system:
 * @owner: (nullable): the widget asking; its window is the parent of the
 *   application chooser and of the error dialog
 * @file: (transfer none): the file to open
 *
 * Opens @file in the application the desktop picks for it, with
 * gtk_show_uri_full(), which goes through the OpenURI portal inside the
 * Flatpak. When that fails, an error dialog names the file and says why;
 * a cancelled choice is not an error. Returns at once.
 */
void
tally_file_chip_open_with_system (GtkWidget *owner,
                                  GFile     *file)
{
  g_return_if_fail (owner == NULL || GTK_IS_WIDGET (owner));
  g_return_if_fail (G_IS_FILE (file));

  show_uri (launch_data_new (owner, file), file);
}

typedef struct {
  LaunchData *launch;
  GFile      *file;
} FolderData;

static void
folder_data_free (FolderData *data)
{
  g_clear_pointer (&data->launch, launch_data_free);
  g_clear_object (&data->file);
  g_free (data);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FolderData, folder_data_free)

/* No file manager answered: open the folder instead. */
static void
open_folder (FolderData *data)
{
  g_autoptr(GFile) folder = g_file_get_parent (data->file);

  show_uri (g_steal_pointer (&data->launch), folder != NULL ? folder : data->file);
}

static void
show_items_cb (GObject      *object,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(FolderData) data = user_data;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;

  reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (object), result, &error);
  if (reply == NULL)
    {
      g_debug ("The file manager did not show %s (%s); opening its folder", data->launch->name, error->message);
      open_folder (data);
    }
}

static void
bus_cb (GObject      *object,
        GAsyncResult *result,
        gpointer      user_data)
{
  g_autoptr(FolderData) data = user_data;
  g_autoptr(GDBusConnection) bus = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *uri = NULL;
  const char *uris[2] = { NULL, NULL };

  bus = g_bus_get_finish (result, &error);
  if (bus == NULL)
    {
      open_folder (data);
      return;
    }

  uri = g_file_get_uri (data->file);
  uris[0] = uri;
  /* The freedesktop.org file manager interface: ShowItems (as uris,
   * s startup_id). */
  g_dbus_connection_call (bus, "org.freedesktop.FileManager1", "/org/freedesktop/FileManager1",
                          "org.freedesktop.FileManager1", "ShowItems",
                          g_variant_new ("(^ass)", uris, ""), NULL,
                          G_DBUS_CALL_FLAGS_NONE, -1, NULL, show_items_cb, g_steal_pointer (&data));
}

/**
 * tally_file_chip_show_in_folder:
 * @owner: (nullable): the widget asking; its window is the parent of an
 *   error dialog
 * @file: (transfer none): the file to show
 *
 * Asks the file manager to show @file selected in its folder (the
 * `org.freedesktop.FileManager1.ShowItems` D-Bus call on the session
 * bus). Without a session bus or a file manager that answers, the folder
 * is opened with tally_file_chip_open_with_system() instead, and an error
 * dialog says so when that fails too. Returns at once.
 */
void
tally_file_chip_show_in_folder (GtkWidget *owner,
                                GFile     *file)
{
  FolderData *data;

  g_return_if_fail (owner == NULL || GTK_IS_WIDGET (owner));
  g_return_if_fail (G_IS_FILE (file));

  data = g_new0 (FolderData, 1);
  data->launch = launch_data_new (owner, file);
  data->file = g_object_ref (file);
  g_bus_get (G_BUS_TYPE_SESSION, NULL, bus_cb, data);
}

/* The chip */

static const char *
block_path (TallyFileChip *self)
{
  TallyBlock *block = TALLY_BLOCK_WIDGET_BLOCK (self);
  const char *path = block != NULL ? tally_block_get_text (block) : NULL;

  return path != NULL && *path != '\0' ? path : NULL;
}

/**
 * tally_file_chip_dup_file:
 * @self: a #TallyFileChip
 *
 * The file of the bound block: its path when absolute, else that path in
 * the session's workspace.
 *
 * Returns: (transfer full) (nullable): the file, or %NULL when no block is
 *   bound or a relative path has no workspace to be read in
 */
GFile *
tally_file_chip_dup_file (TallyFileChip *self)
{
  const char *path;
  const char *workspace;
  g_autofree char *absolute = NULL;

  g_return_val_if_fail (TALLY_IS_FILE_CHIP (self), NULL);

  path = block_path (self);
  if (path == NULL)
    return NULL;
  if (g_path_is_absolute (path))
    return g_file_new_for_path (path);

  workspace = tally_block_widget_get_workspace (TALLY_BLOCK_WIDGET (self));
  if (workspace == NULL)
    return NULL;
  absolute = g_build_filename (workspace, path, NULL);
  return g_file_new_for_path (absolute);
}

static void
set_icon (TallyFileChip *self,
          const char    *content_type)
{
  g_autoptr(GIcon) icon = g_content_type_get_symbolic_icon (content_type);

  gtk_image_set_from_gicon (self->icon, icon);
}

static gboolean
is_markdown (const char *name,
             const char *content_type)
{
  g_autofree char *lower = g_ascii_strdown (name, -1);

  return g_str_has_suffix (lower, ".md") || g_str_has_suffix (lower, ".markdown") ||
         g_content_type_is_a (content_type, "text/markdown");
}

/**
 * tally_file_chip_refresh:
 * @self: a #TallyFileChip
 *
 * Reads the file's size and content type again and shows them, or shows
 * the file as deleted when it is no longer there. The chip does this on
 * bind, on map and before each action on its own.
 *
 * Returns: %TRUE when the file exists
 */
gboolean
tally_file_chip_refresh (TallyFileChip *self)
{
  g_autoptr(GFile) file = NULL;
  g_autoptr(GFileInfo) info = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *guessed = NULL;
  g_autofree char *description = NULL;
  g_autofree char *detail = NULL;
  g_autofree char *size = NULL;
  g_autofree char *accessible = NULL;
  const char *path;
  const char *content_type;

  g_return_val_if_fail (TALLY_IS_FILE_CHIP (self), FALSE);

  path = block_path (self);
  g_free (self->name);
  self->name = path != NULL ? g_path_get_basename (path) : g_strdup ("");
  gtk_label_set_text (self->name_label, self->name);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->name_label), path);

  file = tally_file_chip_dup_file (self);
  if (file != NULL)
    info = g_file_query_info (file,
                              G_FILE_ATTRIBUTE_STANDARD_SIZE ","
                              G_FILE_ATTRIBUTE_STANDARD_CONTENT_TYPE ","
                              G_FILE_ATTRIBUTE_STANDARD_TYPE,
                              G_FILE_QUERY_INFO_NONE, NULL, &error);
  if (info != NULL && g_file_info_get_file_type (info) == G_FILE_TYPE_DIRECTORY)
    g_clear_object (&info);

  if (info != NULL && g_file_info_get_content_type (info) != NULL)
    content_type = g_file_info_get_content_type (info);
  else
    content_type = guessed = g_content_type_guess (self->name, NULL, 0, NULL);
  set_icon (self, content_type);
  self->markdown = is_markdown (self->name, content_type);

  self->deleted = info == NULL;
  if (self->deleted)
    {
      if (error == NULL || g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND) || file == NULL)
        /* Translators: a file the agent wrote that is no longer there */
        detail = g_strdup (_("Deleted"));
      else
        /* Translators: a file that cannot be read; %s says why */
        detail = g_strdup_printf (_("Not available: %s"), error->message);
    }
  else
    {
      size = g_format_size (g_file_info_get_size (info));
      description = g_content_type_get_description (content_type);
      /* Translators: a file's size and kind, e.g. "4.2 kB · Markdown document" */
      detail = g_strdup_printf (_("%s · %s"), size, description);
    }
  gtk_label_set_text (self->detail_label, detail);

  if (self->deleted)
    gtk_widget_add_css_class (self->box, "dim-label");
  else
    gtk_widget_remove_css_class (self->box, "dim-label");
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "file.open", !self->deleted);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "file.show-in-folder", !self->deleted);

  /* Translators: the accessible name of a file chip: the file's name,
   * then its size and kind or "Deleted" */
  accessible = g_strdup_printf (_("File %s, %s"), self->name, detail);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, accessible,
                                  -1);

  return !self->deleted;
}

static void
open_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  TallyFileChip *self = TALLY_FILE_CHIP (widget);
  g_autoptr(GFile) file = NULL;
  g_autofree char *path = NULL;

  if (!tally_file_chip_refresh (self))
    return;

  file = tally_file_chip_dup_file (self);
  path = g_file_get_path (file);
  if (self->markdown && path != NULL &&
      gtk_widget_activate_action (widget, "win.preview-report", "s", path))
    return;

  tally_file_chip_open_with_system (widget, file);
}

static void
show_in_folder_action (GtkWidget  *widget,
                       const char *action_name,
                       GVariant   *parameter)
{
  TallyFileChip *self = TALLY_FILE_CHIP (widget);
  g_autoptr(GFile) file = NULL;

  if (!tally_file_chip_refresh (self))
    return;

  file = tally_file_chip_dup_file (self);
  tally_file_chip_show_in_folder (widget, file);
}

/* Binding and unbinding both show the current block. */
static void
tally_file_chip_bind (TallyBlockWidget *widget,
                      TallyBlock       *block)
{
  tally_file_chip_refresh (TALLY_FILE_CHIP (widget));
}

static void
tally_file_chip_map (GtkWidget *widget)
{
  GTK_WIDGET_CLASS (tally_file_chip_parent_class)->map (widget);

  /* The file may have gone (or come back) while the chip was away. */
  tally_file_chip_refresh (TALLY_FILE_CHIP (widget));
}

static void
tally_file_chip_dispose (GObject *object)
{
  TallyFileChip *self = (TallyFileChip *)object;

  tally_block_widget_set_block (TALLY_BLOCK_WIDGET (self), NULL);
  gtk_widget_dispose_template (GTK_WIDGET (self), TALLY_TYPE_FILE_CHIP);

  G_OBJECT_CLASS (tally_file_chip_parent_class)->dispose (object);
}

static void
tally_file_chip_finalize (GObject *object)
{
  TallyFileChip *self = (TallyFileChip *)object;

  g_free (self->name);

  G_OBJECT_CLASS (tally_file_chip_parent_class)->finalize (object);
}

static void
tally_file_chip_class_init (TallyFileChipClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_file_chip_dispose;
  object_class->finalize = tally_file_chip_finalize;
  widget_class->map = tally_file_chip_map;
  TALLY_BLOCK_WIDGET_CLASS (klass)->bind = tally_file_chip_bind;
  TALLY_BLOCK_WIDGET_CLASS (klass)->unbind = tally_file_chip_bind;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/tallyapp/Tally/transcript/tally-file-chip.ui");
  gtk_widget_class_bind_template_child (widget_class, TallyFileChip, box);
  gtk_widget_class_bind_template_child (widget_class, TallyFileChip, icon);
  gtk_widget_class_bind_template_child (widget_class, TallyFileChip, name_label);
  gtk_widget_class_bind_template_child (widget_class, TallyFileChip, detail_label);

  /**
   * TallyFileChip|file.open:
   *
   * Opens the file: a Markdown file in the report preview, any other in
   * the application the desktop picks.
   */
  gtk_widget_class_install_action (widget_class, "file.open", NULL, open_action);
  /**
   * TallyFileChip|file.show-in-folder:
   *
   * Shows the file in the file manager.
   */
  gtk_widget_class_install_action (widget_class, "file.show-in-folder", NULL, show_in_folder_action);

  gtk_widget_class_set_css_name (widget_class, "tallyfilechip");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void
tally_file_chip_init (TallyFileChip *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->name = g_strdup ("");

  /* The reducer appends the block before it sets the path. */
  g_signal_group_connect_swapped (tally_block_widget_get_block_signals (TALLY_BLOCK_WIDGET (self)),
                                  "notify::text", G_CALLBACK (tally_file_chip_refresh), self);
}

/**
 * tally_file_chip_new:
 *
 * Creates an empty chip for a %TALLY_BLOCK_FILE block.
 *
 * Returns: (transfer floating): a new #TallyFileChip
 */
GtkWidget *
tally_file_chip_new (void)
{
  return g_object_new (TALLY_TYPE_FILE_CHIP, NULL);
}

/**
 * tally_file_chip_get_name:
 * @self: a #TallyFileChip
 *
 * Returns: (transfer none): the file's name as shown (the last part of
 *   its path), empty when no block is bound
 */
const char *
tally_file_chip_get_name (TallyFileChip *self)
{
  g_return_val_if_fail (TALLY_IS_FILE_CHIP (self), NULL);
  return self->name;
}

/**
 * tally_file_chip_get_detail:
 * @self: a #TallyFileChip
 *
 * Returns: (transfer none): the line under the name: the size
 *   (g_format_size(), e.g. "4.2 kB") and the kind of file, or "Deleted"
 */
const char *
tally_file_chip_get_detail (TallyFileChip *self)
{
  g_return_val_if_fail (TALLY_IS_FILE_CHIP (self), NULL);
  return gtk_label_get_text (self->detail_label);
}

/**
 * tally_file_chip_get_deleted:
 * @self: a #TallyFileChip
 *
 * Returns: %TRUE when the file was not there at the last refresh
 *   (tally_file_chip_refresh())
 */
gboolean
tally_file_chip_get_deleted (TallyFileChip *self)
{
  g_return_val_if_fail (TALLY_IS_FILE_CHIP (self), FALSE);
  return self->deleted;
}
