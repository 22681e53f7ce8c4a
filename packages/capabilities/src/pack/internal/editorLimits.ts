/** Largest file the editor opens, in bytes. */
export const MAX_EDIT_FILE_BYTES = 4 * 1024 * 1024;
/** Edits kept per file for `editor.undo`. */
export const MAX_UNDO_PER_FILE = 10;
/** Files with undo history kept; the least recently edited go first. */
export const MAX_UNDO_FILES = 64;
/** Bytes of undo history kept over all files; the oldest entries go first. */
export const MAX_UNDO_BYTES = 32 * 1024 * 1024;
