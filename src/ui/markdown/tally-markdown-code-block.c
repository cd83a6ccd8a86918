/* SPDX-License-Identifier: GPL-3.0-or-later */

#define G_LOG_DOMAIN "tally-markdown"

#include "config.h"

#include <string.h>

#include <glib/gi18n.h>
#include <adwaita.h>
#include <gtksourceview/gtksource.h>

#include "tally-markdown-code-block.h"
#include "tally-scroll-forward.h"
#include "tally-source-style.h"

/**
 * TallyMarkdownCodeBlock:
 *
 * A fenced code block inside an assistant message: a header with the
 * language's name and a Copy button, above a read-only GtkSourceView
 * highlighted for the fence's language. Long lines scroll sideways inside
 * the block rather than widening the message. The colour scheme follows
 * libadwaita's dark setting (Adwaita / Adwaita-dark).
 */

#define COPIED_FEEDBACK_MS 1500

struct _TallyMarkdownCodeBlock
{
  GtkWidget        parent_instance;

  /* template */
  GtkWidget       *header;
  GtkLabel        *language_label;
  GtkButton       *copy_button;
  GtkWidget       *scroller;
  GtkSourceView   *source_view;

  char            *code;
  char            *language;
  guint            copied_id;
};

G_DEFINE_FINAL_TYPE (TallyMarkdownCodeBlock, tally_markdown_code_block, GTK_TYPE_WIDGET)

/* Info-string words that are not GtkSourceView language ids. */
static const struct { const char *alias; const char *id; } language_aliases[] = {
  { "py", "python3" }, { "python", "python3" }, { "py3", "python3" },
  { "javascript", "js" }, { "node", "js" }, { "mjs", "js" },
  { "ts", "typescript" }, { "tsx", "typescript-jsx" },
  { "bash", "sh" }, { "shell", "sh" }, { "zsh", "sh" }, { "console", "sh" },
  { "shellsession", "sh" },
  { "yml", "yaml" }, { "md", "markdown" }, { "c++", "cpp" }, { "cxx", "cpp" },
  { "cs", "c-sharp" }, { "csharp", "c-sharp" }, { "golang", "go" },
  { "rs", "rust" }, { "rb", "ruby" }, { "kt", "kotlin" },
  { "jsonc", "json" }, { "json5", "json" },
  { "postgresql", "sql" }, { "postgres", "sql" }, { "psql", "sql" },
  { "sqlite", "sql" }, { "sqlite3", "sql" }, { "mysql", "sql" },
  { "plpgsql", "sql" }, { "tsql", "sql" },
  { "dockerfile", "docker" }, { "make", "makefile" }, { "patch", "diff" },
  { "tex", "latex" }, { "objective-c", "objc" }, { "ps1", "powershell" },
  { "htm", "html" }, { "svg", "xml" }, { "r", "r" }, { "toml", "toml" },
};

static GtkSourceLanguage *
lookup_language (const char *info)
{
  GtkSourceLanguageManager *manager = gtk_source_language_manager_get_default ();
  g_autofree char *lower = NULL;
  g_autofree char *filename = NULL;
  GtkSourceLanguage *language;
  const char *id;

  if (info == NULL || info[0] == '\0')
    return NULL;

  lower = g_ascii_strdown (info, -1);
  id = lower;
  for (guint i = 0; i < G_N_ELEMENTS (language_aliases); i++)
    if (g_str_equal (language_aliases[i].alias, lower))
      {
        id = language_aliases[i].id;
        break;
      }

  language = gtk_source_language_manager_get_language (manager, id);
  if (language != NULL)
    return language;

  /* Many info strings are file extensions ("vala", "pl", "hs", "lua"). */
  if (strchr (lower, '/') != NULL)
    return NULL;
  filename = g_strconcat ("file.", lower, NULL);
  return gtk_source_language_manager_guess_language (manager, filename, NULL);
}

static gboolean
copied_timeout_cb (gpointer user_data)
{
  TallyMarkdownCodeBlock *self = user_data;

  g_assert (TALLY_IS_MARKDOWN_CODE_BLOCK (self));

  self->copied_id = 0;
  gtk_button_set_icon_name (self->copy_button, "edit-copy-symbolic");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->copy_button), _("Copy"));
  return G_SOURCE_REMOVE;
}

/**
 * tally_markdown_code_block_copy:
 * @self: a code block
 *
 * Puts the block's code (as shown, without the fence) on the clipboard of
 * the block's display and shows a check mark on the Copy button for a
 * moment. This is what the Copy button does.
 */
void
tally_markdown_code_block_copy (TallyMarkdownCodeBlock *self)
{
  GdkClipboard *clipboard;

  g_return_if_fail (TALLY_IS_MARKDOWN_CODE_BLOCK (self));

  clipboard = gtk_widget_get_clipboard (GTK_WIDGET (self));
  gdk_clipboard_set_text (clipboard, self->code);

  gtk_button_set_icon_name (self->copy_button, "object-select-symbolic");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->copy_button), _("Copied"));
  g_clear_handle_id (&self->copied_id, g_source_remove);
  self->copied_id = g_timeout_add (COPIED_FEEDBACK_MS, copied_timeout_cb, self);
}

static void
copy_clicked_cb (TallyMarkdownCodeBlock *self)
{
  g_assert (TALLY_IS_MARKDOWN_CODE_BLOCK (self));

  tally_markdown_code_block_copy (self);
}

static void
tally_markdown_code_block_dispose (GObject *object)
{
  TallyMarkdownCodeBlock *self = (TallyMarkdownCodeBlock *)object;

  g_clear_handle_id (&self->copied_id, g_source_remove);
  gtk_widget_dispose_template (GTK_WIDGET (self), TALLY_TYPE_MARKDOWN_CODE_BLOCK);

  G_OBJECT_CLASS (tally_markdown_code_block_parent_class)->dispose (object);
}

static void
tally_markdown_code_block_finalize (GObject *object)
{
  TallyMarkdownCodeBlock *self = (TallyMarkdownCodeBlock *)object;

  g_free (self->code);
  g_free (self->language);

  G_OBJECT_CLASS (tally_markdown_code_block_parent_class)->finalize (object);
}

static void
tally_markdown_code_block_class_init (TallyMarkdownCodeBlockClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tally_markdown_code_block_dispose;
  object_class->finalize = tally_markdown_code_block_finalize;

  gtk_source_init ();
  g_type_ensure (GTK_SOURCE_TYPE_VIEW);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/tallyapp/Tally/markdown/tally-markdown-code-block.ui");
  gtk_widget_class_bind_template_child (widget_class, TallyMarkdownCodeBlock, header);
  gtk_widget_class_bind_template_child (widget_class, TallyMarkdownCodeBlock, language_label);
  gtk_widget_class_bind_template_child (widget_class, TallyMarkdownCodeBlock, copy_button);
  gtk_widget_class_bind_template_child (widget_class, TallyMarkdownCodeBlock, scroller);
  gtk_widget_class_bind_template_child (widget_class, TallyMarkdownCodeBlock, source_view);
  gtk_widget_class_bind_template_callback (widget_class, copy_clicked_cb);

  gtk_widget_class_set_css_name (widget_class, "tallycodeblock");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void
tally_markdown_code_block_init (TallyMarkdownCodeBlock *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  /* The template sets the Copy button's tooltip while the button is
   * hidden: GTK 4.8's gtk_widget_set_tooltip_text() on a visible widget
   * asks the display where the pointer is (a round trip to the X server,
   * milliseconds while it is busy), and a streamed answer makes its code
   * blocks in the frames that show it. */
  gtk_widget_set_visible (GTK_WIDGET (self->copy_button), TRUE);
  tally_scroll_forward_vertical (GTK_SCROLLED_WINDOW (self->scroller));

  tally_source_style_follow (GTK_SOURCE_BUFFER (gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->source_view))));
}

/**
 * tally_markdown_code_block_new:
 * @code: the code, shown verbatim (UTF-8)
 * @language: (nullable): the first word of the fence's info string, e.g.
 *   "sql"; %NULL or empty for none. Common aliases ("py", "bash", "ts") and
 *   file extensions are understood; an unknown word is shown as given,
 *   without highlighting.
 *
 * Creates a code block widget.
 *
 * Returns: (transfer floating): a new #TallyMarkdownCodeBlock
 */
GtkWidget *
tally_markdown_code_block_new (const char *code,
                               const char *language)
{
  TallyMarkdownCodeBlock *self;
  GtkTextBuffer *buffer;

  self = g_object_new (TALLY_TYPE_MARKDOWN_CODE_BLOCK, NULL);
  self->code = g_strdup (code != NULL ? code : "");

  buffer = gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->source_view));
  gtk_text_buffer_set_enable_undo (buffer, FALSE);
  tally_markdown_code_block_set_language (self, language);
  gtk_text_buffer_set_text (buffer, self->code, -1);

  return GTK_WIDGET (self);
}

/**
 * tally_markdown_code_block_set_language:
 * @self: a code block
 * @language: (nullable): the first word of the fence's info string, as
 *   for tally_markdown_code_block_new()
 *
 * Sets the language the code is highlighted as and named by in the
 * header and to assistive technologies. The markdown view sets it on a
 * code block it made in advance, when a fence takes it.
 */
void
tally_markdown_code_block_set_language (TallyMarkdownCodeBlock *self,
                                        const char             *language)
{
  GtkSourceLanguage *source_language;
  GtkTextBuffer *buffer;
  g_autofree char *label = NULL;

  g_return_if_fail (TALLY_IS_MARKDOWN_CODE_BLOCK (self));

  if (language == NULL)
    language = "";
  if (self->language != NULL && strcmp (language, self->language) == 0)
    return;

  g_free (self->language);
  self->language = g_strdup (language);

  buffer = gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->source_view));
  source_language = lookup_language (self->language);
  tally_source_language_keep_compiled (source_language);
  gtk_source_buffer_set_language (GTK_SOURCE_BUFFER (buffer), source_language);
  gtk_source_buffer_set_highlight_syntax (GTK_SOURCE_BUFFER (buffer), source_language != NULL);

  if (source_language != NULL)
    gtk_label_set_text (self->language_label, gtk_source_language_get_name (source_language));
  else if (self->language[0] != '\0')
    gtk_label_set_text (self->language_label, self->language);
  else
    gtk_label_set_text (self->language_label, _("Code"));

  /* Translators: the accessible name of a code block; %s is the name of
   * its language, such as "SQL", or "Code" when it has none. */
  label = g_strdup_printf (_("%s code"), gtk_label_get_text (self->language_label));
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->source_view),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, label,
                                  GTK_ACCESSIBLE_PROPERTY_READ_ONLY, TRUE,
                                  -1);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, label,
                                  -1);
}

/**
 * tally_markdown_code_block_set_code:
 * @self: a code block
 * @code: the new code
 *
 * Replaces the code shown, keeping the language. When @code extends the
 * current code (a fence that is still streaming) only the new end is
 * inserted, so highlighting continues where it was.
 */
void
tally_markdown_code_block_set_code (TallyMarkdownCodeBlock *self,
                                    const char             *code)
{
  GtkTextBuffer *buffer;
  gsize old_len;

  g_return_if_fail (TALLY_IS_MARKDOWN_CODE_BLOCK (self));

  if (code == NULL)
    code = "";
  if (strcmp (code, self->code) == 0)
    return;

  buffer = gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->source_view));
  old_len = strlen (self->code);

  if (g_str_has_prefix (code, self->code))
    {
      GtkTextIter end;

      gtk_text_buffer_get_end_iter (buffer, &end);
      gtk_text_buffer_insert (buffer, &end, code + old_len, -1);
    }
  else
    gtk_text_buffer_set_text (buffer, code, -1);

  g_free (self->code);
  self->code = g_strdup (code);
}

/**
 * tally_markdown_code_block_get_code:
 * @self: a code block
 *
 * Returns: (transfer none): the code shown (what Copy copies)
 */
const char *
tally_markdown_code_block_get_code (TallyMarkdownCodeBlock *self)
{
  g_return_val_if_fail (TALLY_IS_MARKDOWN_CODE_BLOCK (self), NULL);

  return self->code;
}

/**
 * tally_markdown_code_block_get_language:
 * @self: a code block
 *
 * Returns: (transfer none): the info-string word the block was created
 *   with, empty when none
 */
const char *
tally_markdown_code_block_get_language (TallyMarkdownCodeBlock *self)
{
  g_return_val_if_fail (TALLY_IS_MARKDOWN_CODE_BLOCK (self), NULL);

  return self->language;
}

/**
 * tally_markdown_code_block_get_language_name:
 * @self: a code block
 *
 * Returns: (transfer none): the name shown in the header: the highlighting
 *   language's name (e.g. "SQL"), else the info-string word, else "Code"
 */
const char *
tally_markdown_code_block_get_language_name (TallyMarkdownCodeBlock *self)
{
  g_return_val_if_fail (TALLY_IS_MARKDOWN_CODE_BLOCK (self), NULL);

  return gtk_label_get_text (self->language_label);
}

/**
 * tally_markdown_code_block_get_scheme_id:
 * @self: a code block
 *
 * Returns: (transfer none) (nullable): the id of the colour scheme in use,
 *   "Adwaita" or "Adwaita-dark"
 */
const char *
tally_markdown_code_block_get_scheme_id (TallyMarkdownCodeBlock *self)
{
  GtkTextBuffer *buffer;
  GtkSourceStyleScheme *scheme;

  g_return_val_if_fail (TALLY_IS_MARKDOWN_CODE_BLOCK (self), NULL);

  buffer = gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->source_view));
  scheme = gtk_source_buffer_get_style_scheme (GTK_SOURCE_BUFFER (buffer));
  return scheme != NULL ? gtk_source_style_scheme_get_id (scheme) : NULL;
}
