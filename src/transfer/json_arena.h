/*
 * json_arena.h — jansson's allocations for the parse of one line, from one
 * block that is emptied at once, instead of a malloc and a free for each
 * of the line's values.
 */
#ifndef DDB_TRANSFER_JSON_ARENA_H
#define DDB_TRANSFER_JSON_ARENA_H

/* From here on, jansson allocates from the arena. */
extern void json_arena_begin(void);

/* Frees what jansson allocated since json_arena_begin (every value must be released first); jansson uses malloc again. */
extern void json_arena_end(void);

/* Frees memory jansson gave while the arena was on (such as json_dumps's text), before json_arena_end. */
extern void json_arena_free(void *memory);

#endif
